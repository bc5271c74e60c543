"""`kaoshi.leaderboard`: every run in a store on a benchmark, ranked in the benchmark's own layout."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kaoshi.api.counting import Counted
from kaoshi.api.kept import kept_comparison
from kaoshi.api.summary import StoreLike, benchmark_metrics, open_store, read_scores
from kaoshi.benchmarks import leaderboard_layout
from kaoshi.errors import InputError
from kaoshi.report.leaderboard import Board, Entry, build_board
from kaoshi.results.aggregate import RunSummary, summarize_kinds
from kaoshi.results.grading import chosen_grader
from kaoshi.results.layout import LeaderboardLayout
from kaoshi.results.metric import measured
from kaoshi.store import RunRecord, Store
from kaoshi.store.columns import ScoreRow


def leaderboard(
    *,
    store: StoreLike = None,
    benchmark: str | None = None,
    split: str | None = None,
    keep: bool = True,
) -> list[Board]:
    """One board per benchmark in the store (or only `benchmark`, only runs on `split`), each run's open
    answers scored by its most recent judge, compared on the questions every run answered.
    `kaoshi.report.leaderboard.leaderboard_table(board)` renders one. A board ranks runs and never pairs
    their answers question by question: its summaries hold no per-question outcomes (RunSummary.outcomes
    is empty; kaoshi.compare pairs them).

    What a board counts is kept in the store and read back while its runs are unchanged
    (kaoshi.api.kept); `keep` False: read what is kept, but write nothing (the viewer)."""
    with open_store(store, read_only=True) as opened:
        chosen: dict[str, list[RunRecord]] = {}
        for run in opened.runs():
            spec = run.spec
            if benchmark in (None, spec.benchmark) and split in (None, spec.split):
                chosen.setdefault(spec.benchmark, []).append(run)
        if not chosen:
            wanted = f" on benchmark {benchmark!r}" if benchmark else ""
            raise InputError(f"no runs{wanted} in the store")
        return [_board(opened, name, chosen[name], keep) for name in sorted(chosen)]


def keep_board(store: Store, benchmark: str) -> None:
    """Bring what the store keeps of `benchmark`'s board (every split's runs, as `kaoshi leaderboard`
    shows it) up to date: counted now, so that the next board reads it. What a run's writer does when the
    run ends (kaoshi.api.evaluation), once its answers are in: the first `kaoshi leaderboard` after a run
    then reads what is kept rather than pairing every run again (seconds at a million samples). Nothing
    is kept of a board with runs of k samples a question or rows from before the fingerprint column (read
    from the rows each time), nor when the store cannot be written just then."""
    records = [run for run in store.runs() if run.spec.benchmark == benchmark]
    if records and store.keeps_summaries():
        # what is kept is the counts: the benchmark's metrics are measured on them when a board is read
        _counted_board(store, benchmark, records, leaderboard_layout(benchmark), keep=True, measure=False)


def _board(store: Store, benchmark: str, records: Sequence[RunRecord], keep: bool) -> Board:
    layout = leaderboard_layout(benchmark)
    counted = _counted_board(store, benchmark, records, layout, keep)
    if counted is not None:
        return counted
    loaded: list[tuple[RunRecord, list[ScoreRow], str | None]] = []
    repeats: dict[str, list[ScoreRow]] = {}  # runs of k samples a question: their other samples
    for run in records:
        scored = read_scores(store, run.name)  # numbers only: each sample's score row
        loaded.append((run, list(scored.rows), scored.grader))
        if run.spec.repeats > 1:
            repeats[run.name] = list(scored.repeat_rows)
    return _unpaired(build_board(benchmark, loaded, layout, repeats, metrics=benchmark_metrics(benchmark)))


def _unpaired(board: Board) -> Board:
    """The board with no per-question outcomes in its summaries, as a board counted by SQLite has."""

    def bare(summary: RunSummary) -> RunSummary:
        return replace(summary, outcomes={})

    entries = tuple(
        replace(entry, summary=bare(entry.summary), more_samples=tuple(map(bare, entry.more_samples)))
        for entry in board.entries
    )
    compared = replace(board.compared, summaries=tuple(map(bare, board.compared.summaries)))
    return replace(board, entries=entries, compared=compared)


def _counted_board(
    store: Store,
    benchmark: str,
    records: Sequence[RunRecord],
    layout: LeaderboardLayout,
    keep: bool,
    *,
    measure: bool = True,
) -> Board | None:
    """The board build_board makes, with SQLite doing the counting (kaoshi.api.counting) or from what the
    store keeps of it (kaoshi.api.kept); None where a run has k samples a question or rows from before the
    fingerprint and group columns: build_board from their score rows then. `measure` False: the summaries
    without the benchmark's metrics (what is kept is the counts: a board read from them measures them)."""
    graders = [chosen_grader(store, run.name, None) for run in records]
    metrics = benchmark_metrics(benchmark) if measure else ()

    def summarize(run: RunRecord, grader: str | None, counted: Counted) -> RunSummary:
        # as build_board summarises a run: by subject and domain, with its standard scores and the
        # benchmark's own numbers
        summary = summarize_kinds(
            run.name, counted.kinds, {}, ["subject", "domain"], run.spec.standard_scores
        )
        return measured(summary, metrics)

    compared = kept_comparison(store, records, graders, summarize, keep=keep)
    if compared is None:
        return None
    entries = tuple(
        Entry(run, summary, covered, grader)
        for run, summary, covered, grader in zip(
            records, compared.summaries, compared.coverage, graders, strict=True
        )
    )
    return Board(benchmark, entries, compared, layout)
