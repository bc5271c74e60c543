"""`kaoshi.leaderboard`: every run in a store on a benchmark, ranked in the benchmark's own layout."""

from __future__ import annotations

from kaoshi.api.summary import StoreLike, open_store, read_scores
from kaoshi.benchmarks import leaderboard_layout
from kaoshi.errors import InputError
from kaoshi.report.leaderboard import Board, build_board
from kaoshi.store import RunRecord
from kaoshi.store.columns import ScoreRow


def leaderboard(
    *, store: StoreLike = None, benchmark: str | None = None, split: str | None = None
) -> list[Board]:
    """One board per benchmark in the store (or only `benchmark`, only runs on `split`), each run's open
    answers scored by its most recent judge, compared on the questions every run answered.
    `kaoshi.report.leaderboard.leaderboard_table(board)` renders one."""
    by_benchmark: dict[str, list[tuple[RunRecord, list[ScoreRow], str | None]]] = {}
    repeats: dict[str, list[ScoreRow]] = {}  # runs of k samples a question: their other samples
    with open_store(store, read_only=True) as opened:
        for run in opened.runs():
            spec = run.spec
            if benchmark not in (None, spec.benchmark) or split not in (None, spec.split):
                continue
            scored = read_scores(opened, run.name)  # numbers only: each sample's score row
            by_benchmark.setdefault(spec.benchmark, []).append((run, list(scored.rows), scored.grader))
            if spec.repeats > 1:
                repeats[run.name] = list(scored.repeat_rows)
    if not by_benchmark:
        wanted = f" on benchmark {benchmark!r}" if benchmark else ""
        raise InputError(f"no runs{wanted} in the store")
    return [
        build_board(name, by_benchmark[name], leaderboard_layout(name), repeats)
        for name in sorted(by_benchmark)
    ]
