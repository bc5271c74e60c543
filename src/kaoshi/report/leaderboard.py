"""All runs on one benchmark, ranked: C-Eval's layout for C-Eval, domains for everything else.

The runs are ranked on the questions all of them answered (same id, same content), and the table says
how many that is; each run's `questions` cell gives its own coverage and says when it is incomplete.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kaoshi.data.ceval_subjects import CEVAL_CATEGORIES, CEVAL_HARD_SUBJECTS, CEVAL_SUBJECTS
from kaoshi.report.aggregate import OBJECTIVE, SUBJECTIVE, UNKNOWN_GROUP, RunSummary, summarize
from kaoshi.report.compare import ComparedRuns, compare_runs
from kaoshi.report.metrics import CEVAL_AVERAGE
from kaoshi.report.render import percent
from kaoshi.report.tables import TextTable, mark_best
from kaoshi.store.coverage import Coverage
from kaoshi.store.pairing import conflict_note
from kaoshi.store.records import RunRecord, SampleRecord

CEVAL_BENCHMARKS = ("ceval", "ceval-hard")
HARD = "Hard"
OBJECTIVE_POINTS = "objective pts"
SUBJECTIVE_POINTS = "subjective pts"


@dataclass(frozen=True)
class Entry:
    run: RunRecord
    summary: RunSummary  # on the board's common questions
    coverage: Coverage  # the run's own: what it answered of its exam
    grader: str | None = None  # whose grades of open answers count (the run's most recent judge setup)


@dataclass(frozen=True)
class Board:
    """One benchmark's runs, summarised on the questions all of them answered."""

    benchmark: str
    entries: tuple[Entry, ...]
    compared: ComparedRuns

    def to_json(self, table: TextTable) -> dict[str, object]:
        order = [row[0] for row in table.rows]
        coverage = {e.run.name: e.coverage.to_json() for e in self.entries}
        return {
            "benchmark": self.benchmark,
            "columns": list(table.headers),
            "rows": table.rows,
            **self.compared.to_json(),
            "coverage": [coverage[name] for name in order],
        }


def build_board(benchmark: str, loaded: Sequence[tuple[RunRecord, list[SampleRecord], str | None]]) -> Board:
    """`loaded`: each run with its samples (open answers graded) and the grader whose grades count."""
    compared = compare_runs(
        [(run, samples) for run, samples, _ in loaded],
        lambda run, samples: summarize(run.name, samples, ["subject", "domain"]),
    )
    entries = tuple(
        Entry(run, summary, coverage, grader)
        for (run, _, grader), summary, coverage in zip(
            loaded, compared.summaries, compared.coverage, strict=True
        )
    )
    return Board(benchmark, entries, compared)


def hard_average(summary: RunSummary) -> float | None:
    """Mean accuracy over the C-Eval Hard subjects the run has."""
    subjects = summary.groups.get("subject", {})
    values = [
        t.accuracy for name, t in subjects.items() if name in CEVAL_HARD_SUBJECTS and t.accuracy is not None
    ]
    return sum(values) / len(values) if values else None


def _ceval_values(entry: Entry) -> dict[str, float | None]:
    averages = entry.summary.category_averages
    values: dict[str, float | None] = {c: averages.get(c) for c in (*CEVAL_CATEGORIES, CEVAL_AVERAGE)}
    values[HARD] = hard_average(entry.summary)
    return values


def _ceval_coverage(entry: Entry) -> dict[str, tuple[int, int]]:
    """Per C-Eval column: (subjects the run graded, subjects the column averages over in C-Eval)."""
    graded = {name for name, t in entry.summary.groups.get("subject", {}).items() if t.accuracy is not None}
    columns: dict[str, set[str]] = {c: set() for c in CEVAL_CATEGORIES}
    for subject, info in CEVAL_SUBJECTS.items():
        columns.setdefault(info.category, set()).add(subject)
    columns[CEVAL_AVERAGE] = set(CEVAL_SUBJECTS)
    columns[HARD] = set(CEVAL_HARD_SUBJECTS)
    return {c: (len(graded & subjects), len(subjects)) for c, subjects in columns.items()}


def _with_coverage(cell: str, coverage: tuple[int, int] | None) -> str:
    """A C-Eval average over fewer subjects than C-Eval's own says so: `45.0% (2/20)`."""
    if coverage is None or cell == "—" or coverage[0] == coverage[1]:
        return cell
    return f"{cell} ({coverage[0]}/{coverage[1]})"


def _domain_values(entry: Entry, domains: Sequence[str]) -> dict[str, float | None]:
    groups = entry.summary.groups.get("domain", {})
    values: dict[str, float | None] = {d: groups[d].accuracy if d in groups else None for d in domains}
    values["macro"] = entry.summary.macro.get("domain")
    values["accuracy"] = entry.summary.overall.accuracy
    return values


def _part_values(summary: RunSummary) -> dict[str, float | None]:
    parts = summary.parts
    return {
        OBJECTIVE_POINTS: parts[OBJECTIVE].points_rate if OBJECTIVE in parts else None,
        SUBJECTIVE_POINTS: parts[SUBJECTIVE].points_rate if SUBJECTIVE in parts else None,
    }


def leaderboard_table(board: Board) -> TextTable:
    """Runs as rows, best in each column marked, sorted by the headline number (C-Eval Average, or
    accuracy over questions) on the questions every run answered."""
    benchmark, entries, compared = board.benchmark, board.entries, board.compared
    if benchmark in CEVAL_BENCHMARKS:
        columns = [*CEVAL_CATEGORIES, CEVAL_AVERAGE, HARD]
        values = [_ceval_values(e) for e in entries]
        headline = CEVAL_AVERAGE
    else:
        domains = sorted(
            {d for e in entries for d in e.summary.groups.get("domain", {}) if d != UNKNOWN_GROUP}
        )
        columns = [*domains, "macro", "accuracy"] if domains else ["accuracy"]
        values = [_domain_values(e, domains) for e in entries]
        headline = "accuracy"
    if any(e.summary.has_subjective for e in entries):
        columns += [OBJECTIVE_POINTS, SUBJECTIVE_POINTS]
        for entry, row in zip(entries, values, strict=True):
            row.update(_part_values(entry.summary))
    # Without common questions the numbers are not comparable: complete runs first, then by number.
    incomplete_last = not compared.common
    order = sorted(
        range(len(entries)),
        key=lambda i: (incomplete_last and not entries[i].coverage.complete, -(values[i][headline] or -1.0)),
    )
    fixed = ["run", "model", "method", "prompt", "split", "questions"]
    is_ceval = benchmark in CEVAL_BENCHMARKS
    rows: list[list[str]] = []
    numbers: list[list[float | None]] = []
    for i in order:
        run = entries[i].run
        spec = run.spec
        prompt = f"{spec.prompt} {spec.shots}-shot"
        subjects = _ceval_coverage(entries[i]) if is_ceval else {}
        rows.append(
            [
                run.name,
                spec.model,
                spec.method,
                prompt,
                spec.split or "—",
                entries[i].coverage.short,
                *(_with_coverage(percent(values[i][c]), subjects.get(c)) for c in columns),
            ]
        )
        blanks: list[float | None] = [None] * len(fixed)
        numbers.append(blanks + [values[i][c] for c in columns])
    best = {(r, c) for c, r in mark_best(_transpose(numbers))} if compared.common else set()
    title = f"leaderboard — {benchmark}" + (f" ({compared.headline})" if len(entries) > 1 else "")
    return TextTable(title, (*fixed, *columns), rows, frozenset(best), "; ".join(_notes(board)), "column")


def _notes(board: Board) -> list[str]:
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
    if board.benchmark in CEVAL_BENCHMARKS:
        notes.append(
            "categories are means of subject accuracies, Average is over all subjects; (n/N): the average "
            "covers n of the N subjects C-Eval averages over"
        )
    return notes


def _transpose(rows: list[list[float | None]]) -> list[list[float | None]]:
    return [list(column) for column in zip(*rows, strict=True)] if rows else []
