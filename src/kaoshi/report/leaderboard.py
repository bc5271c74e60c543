"""All runs on one benchmark, ranked: C-Eval's layout for C-Eval, domains for everything else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kaoshi.data.ceval_subjects import CEVAL_CATEGORIES, CEVAL_HARD_SUBJECTS
from kaoshi.report.aggregate import OBJECTIVE, SUBJECTIVE, UNKNOWN_GROUP, RunSummary
from kaoshi.report.metrics import CEVAL_AVERAGE
from kaoshi.report.render import percent
from kaoshi.report.tables import TextTable, mark_best
from kaoshi.store.records import RunRecord

CEVAL_BENCHMARKS = ("ceval", "ceval-hard")
HARD = "Hard"
OBJECTIVE_POINTS = "objective pts"
SUBJECTIVE_POINTS = "subjective pts"


@dataclass(frozen=True)
class Entry:
    run: RunRecord
    summary: RunSummary
    grader: str | None = None  # whose grades of open answers count (the run's most recent judge setup)


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


def leaderboard_table(benchmark: str, entries: Sequence[Entry]) -> TextTable:
    """Runs as rows, best in each column marked, sorted by the headline number (C-Eval Average, or
    accuracy over questions)."""
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
    order = sorted(range(len(entries)), key=lambda i: -(values[i][headline] or -1.0))
    fixed = ["run", "model", "method", "prompt", "questions"]
    rows: list[list[str]] = []
    numbers: list[list[float | None]] = []
    for i in order:
        run = entries[i].run
        spec = run.spec
        prompt = f"{spec.prompt} {spec.shots}-shot"
        done = f"{run.n_samples}/{spec.n_questions}"
        rows.append(
            [run.name, spec.model, spec.method, prompt, done, *(percent(values[i][c]) for c in columns)]
        )
        blanks: list[float | None] = [None] * len(fixed)
        numbers.append(blanks + [values[i][c] for c in columns])
    best = {(r, c) for c, r in mark_best(_transpose(numbers))}
    fingerprints = {e.run.spec.fingerprint for e in entries}
    notes = []
    if len(fingerprints) > 1:
        notes.append(f"these runs cover {len(fingerprints)} different question sets: compare with care")
    if OBJECTIVE_POINTS in columns:
        notes.append("pts: % of points available over the scored questions (open answers once judged)")
        graders = sorted({e.grader or "not judged" for e in entries if e.summary.has_subjective})
        if len(graders) > 1:
            notes.append(f"open answers graded by different judges ({', '.join(graders)}): compare with care")
    if benchmark in CEVAL_BENCHMARKS:
        notes.append("categories are means of subject accuracies, Average is over all subjects")
    return TextTable(
        f"leaderboard — {benchmark}", (*fixed, *columns), rows, frozenset(best), "; ".join(notes), "column"
    )


def _transpose(rows: list[list[float | None]]) -> list[list[float | None]]:
    return [list(column) for column in zip(*rows, strict=True)] if rows else []
