"""All runs on one benchmark, ranked, in the benchmark's own leaderboard layout (C-Eval's categories for
C-Eval, a column per domain unless a benchmark has its own).

The runs are ranked on the questions all of them answered (same id, same content), and the table says
how many that is; each run's `questions` cell gives its own coverage and says when it is incomplete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kaoshi.qtypes import kind_of
from kaoshi.report.compare import ComparedRuns, compare_runs
from kaoshi.report.render import percent
from kaoshi.report.tables import TextTable, mark_best
from kaoshi.results.aggregate import RunSummary, summarize_rows
from kaoshi.results.layout import DomainLayout, LeaderboardLayout
from kaoshi.results.metric import Metric, measured
from kaoshi.results.metrics import OBJECTIVE, SUBJECTIVE
from kaoshi.results.repeats import by_sample_index
from kaoshi.store.columns import ScoreRow, score_row
from kaoshi.store.coverage import Coverage
from kaoshi.store.pairing import conflict_note
from kaoshi.store.records import Method, RunRecord, SampleRecord

OBJECTIVE_POINTS = "objective pts"
SUBJECTIVE_POINTS = "subjective pts"


@dataclass(frozen=True)
class Entry:
    run: RunRecord
    summary: RunSummary  # on the board's common questions
    coverage: Coverage  # the run's own: what it answered of its exam
    grader: str | None = None  # whose grades of open answers count (the run's most recent judge setup)
    # a run of k samples a question: its other samples' summaries on the same questions (sample 2..k);
    # the board shows each number as the mean over the k samples
    more_samples: tuple[RunSummary, ...] = ()


@dataclass(frozen=True)
class Board:
    """One benchmark's runs, summarised on the questions all of them answered."""

    benchmark: str
    entries: tuple[Entry, ...]
    compared: ComparedRuns
    layout: LeaderboardLayout = field(default_factory=DomainLayout)  # the benchmark's columns

    def to_json(self, table: TextTable) -> dict[str, object]:
        order = [row[0] for row in table.rows]
        coverage = {e.run.name: e.coverage.to_json() for e in self.entries}
        specs = {e.run.name: e.run.spec for e in self.entries}
        return {
            "benchmark": self.benchmark,
            "columns": list(table.headers),
            "rows": table.rows,
            **self.compared.to_json(),
            "coverage": [coverage[name] for name in order],
            "specs": {name: specs[name].to_json() for name in order},  # what produced each row
        }


def build_board(
    benchmark: str,
    loaded: Sequence[tuple[RunRecord, Sequence[ScoreRow] | Sequence[SampleRecord], str | None]],
    layout: LeaderboardLayout | None = None,
    repeats: Mapping[str, Sequence[ScoreRow] | Sequence[SampleRecord]] | None = None,
    *,
    metrics: Sequence[Metric],
) -> Board:
    """`loaded`: each run with its samples (open answers graded), or their score rows
    (kaoshi.api.summary.read_scores), and the grader whose grades count; `layout`: the benchmark's columns
    (kaoshi.benchmarks.leaderboard_layout; default one per domain); `repeats`: run name -> the samples
    after each question's first, for runs of k samples a question; `metrics`: the benchmark's own
    (kaoshi.api.summary.benchmark_metrics), measured on each run's summary: a layout reads its columns
    from them (C-Eval's averages), so they are always given."""
    compared_ids: dict[str, set[str]] = {}
    rows = [(run, _rows(samples), grader) for run, samples, grader in loaded]
    more = {name: _rows(samples) for name, samples in (repeats or {}).items()}

    def summarize_run(run: RunRecord, samples: list[ScoreRow]) -> RunSummary:
        compared_ids[run.name] = {s.question_id for s in samples}
        # the run's standard scores too, as `kaoshi report` and `kaoshi.summarize` count its points
        summary = summarize_rows(run.name, samples, ["subject", "domain"], run.spec.standard_scores)
        return measured(summary, metrics)

    compared = compare_runs([(run, samples) for run, samples, _ in rows], summarize_run)
    entries = tuple(
        Entry(run, summary, coverage, grader, _more_samples(run, compared_ids, more.get(run.name), metrics))
        for (run, _, grader), summary, coverage in zip(
            rows, compared.summaries, compared.coverage, strict=True
        )
    )
    return Board(benchmark, entries, compared, layout or DomainLayout())


def _rows(samples: Sequence[ScoreRow] | Sequence[SampleRecord]) -> list[ScoreRow]:
    return [s if isinstance(s, ScoreRow) else score_row(s) for s in samples]


def _more_samples(
    run: RunRecord,
    compared_ids: Mapping[str, set[str]],
    repeats: Sequence[ScoreRow] | None,
    metrics: Sequence[Metric],
) -> tuple[RunSummary, ...]:
    """A run's samples 2..k summarised each on the questions the board compares."""
    if not repeats or run.spec.repeats < 2 or any(not kind_of(s.qtype).objective for s in repeats):
        # open answers are judged on a run's first sample only: its points stand for the run
        return ()
    asked = compared_ids.get(run.name, set())
    return tuple(
        measured(summarize_rows(run.name, rows, ["subject", "domain"], run.spec.standard_scores), metrics)
        for rows in by_sample_index(repeats, run.spec.repeats, asked)
    )


def _entry_values(layout: LeaderboardLayout, entry: Entry) -> dict[str, float | None]:
    """The entry's numbers in the layout; a run of k samples a question: each the mean over its samples
    (None where a sample has none)."""
    each = [dict(layout.values(summary)) for summary in (entry.summary, *entry.more_samples)]
    if len(each) == 1:
        return each[0]
    means: dict[str, float | None] = {}
    for column in each[0]:
        found = [values.get(column) for values in each]
        numbers = [v for v in found if v is not None]
        means[column] = sum(numbers) / len(numbers) if len(numbers) == len(found) else None
    return means


def _with_coverage(cell: str, coverage: tuple[int, int] | None) -> str:
    """An average over fewer groups than the benchmark's own says so: `45.0% (2/20)`."""
    if coverage is None or cell == "—" or coverage[0] == coverage[1]:
        return cell
    return f"{cell} ({coverage[0]}/{coverage[1]})"


def _cell(layout: LeaderboardLayout, column: str, value: float | None) -> str:
    text = layout.cell_text(column, value)
    return percent(value) if text is None else text


def _part_values(summary: RunSummary) -> dict[str, float | None]:
    parts = summary.parts
    return {
        OBJECTIVE_POINTS: parts[OBJECTIVE].points_rate if OBJECTIVE in parts else None,
        SUBJECTIVE_POINTS: parts[SUBJECTIVE].points_rate if SUBJECTIVE in parts else None,
    }


def leaderboard_table(board: Board) -> TextTable:
    """Runs as rows, best in each column marked, sorted by the layout's headline number (C-Eval Average,
    or accuracy over questions) on the questions every run answered."""
    benchmark, entries, compared = board.benchmark, board.entries, board.compared
    layout = board.layout
    columns = list(layout.columns([e.summary for e in entries]))
    values = [_entry_values(layout, e) for e in entries]  # copies: the points columns go in too
    headline = layout.headline
    if any(e.summary.has_subjective for e in entries):
        columns += [OBJECTIVE_POINTS, SUBJECTIVE_POINTS]
        for entry, row in zip(entries, values, strict=True):
            row.update(_part_values(entry.summary))
    # Without common questions the numbers are not comparable: complete runs first, then by number.
    incomplete_last = not compared.common
    order = sorted(
        range(len(entries)),
        key=lambda i: (
            incomplete_last and not entries[i].coverage.complete,
            -(values[i].get(headline) or -1.0),
        ),
    )
    fixed = ["run", "model", "method", "prompt", "split", "questions"]
    rows: list[list[str]] = []
    numbers: list[list[float | None]] = []
    for i in order:
        run = entries[i].run
        spec = run.spec
        prompt = f"{spec.prompt} {spec.shots}-shot"
        if spec.method is not Method.VOTE:  # a vote asks no model: it has no chat form
            prompt += f" · {'chat' if spec.chat else 'no chat'}"
        covered = layout.coverage(entries[i].summary)
        rows.append(
            [
                run.name,
                spec.model,
                spec.method,
                prompt,
                spec.split or "—",
                entries[i].coverage.short,
                *(_with_coverage(_cell(layout, c, values[i].get(c)), covered.get(c)) for c in columns),
            ]
        )
        blanks: list[float | None] = [None] * len(fixed)
        numbers.append(blanks + [values[i].get(c) for c in columns])
    best = {(r, c) for c, r in mark_best(_transpose(numbers))} if compared.common else set()
    title = f"leaderboard — {benchmark}" + (f" ({compared.headline})" if len(entries) > 1 else "")
    notes = "; ".join(_notes(board, layout))
    # In a narrow terminal the scores stay (the headline longest, then from the left), the run's name
    # with them; the model and prompt wrap; method, split and coverage go first.
    scores = [99 if c == headline else 90 - min(i, 40) for i, c in enumerate(columns)]
    priority = (100, 60, 30, 55, 40, 45, *scores)
    wrap = frozenset({fixed.index("model"), fixed.index("prompt")})
    return TextTable(title, (*fixed, *columns), rows, frozenset(best), notes, "column", priority, wrap)


def _notes(board: Board, layout: LeaderboardLayout) -> list[str]:
    entries = board.entries
    notes = []
    incomplete = [e.run.name for e in entries if not e.coverage.complete]
    if incomplete:
        notes.append(
            f"incomplete: {', '.join(incomplete)} (errors, missing questions or not finished; resume to "
            "complete)"
        )
    fingerprints = {e.run.spec.fingerprint for e in entries}
    if len(fingerprints) > 1 and board.compared.common:
        notes.append(
            f"these runs cover {len(fingerprints)} different question sets: every number is over the "
            "questions all of them answered"
        )
    if board.compared.pairing.conflicts:
        notes.append(conflict_note(board.compared.pairing.conflicts))
    if any(e.summary.has_subjective for e in entries):
        notes.append("pts: % of points available over the scored questions (open answers once judged)")
        graders = sorted({e.grader or "not judged" for e in entries if e.summary.has_subjective})
        if len(graders) > 1:
            notes.append(f"open answers graded by different judges ({', '.join(graders)}): compare with care")
    repeated = [f"{e.run.name} ({e.run.spec.repeats})" for e in entries if e.more_samples]
    if repeated:
        notes.append(
            f"k samples a question: {', '.join(repeated)}; each of their numbers is the mean over the k "
            "samples (avg@k)"
        )
    if layout.note:
        notes.append(layout.note)
    return notes


def _transpose(rows: list[list[float | None]]) -> list[list[float | None]]:
    return [list(column) for column in zip(*rows, strict=True)] if rows else []
