"""Runs on the same questions (prompt strategies, models, base vs fine-tuned): accuracy per group and the
difference of each run from a baseline with a paired-bootstrap interval, on the questions every run graded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kaoshi.analysis.stats import BootstrapResult, Differences, bootstrap_differences, paired_differences
from kaoshi.report.tables import TextTable, mark_best
from kaoshi.results.aggregate import GROUP_KEYS
from kaoshi.results.metrics import UNKNOWN_GROUP
from kaoshi.store.columns import ScoreRow
from kaoshi.store.pairing import Pairing, graded, pair_questions
from kaoshi.store.records import SampleRecord

Sampled = TypeVar("Sampled", SampleRecord, ScoreRow)  # whole samples, or the rows numbers read


@dataclass(frozen=True)
class PairedRow:
    group: str
    n: int
    accuracy: list[float]  # per run
    differences: list[BootstrapResult]  # per run after the baseline

    def to_json(self, runs: Sequence[str]) -> dict[str, object]:
        return {
            "group": self.group,
            "n": self.n,
            "accuracy": dict(zip(runs, self.accuracy, strict=True)),
            "differences": {run: d.to_json() for run, d in zip(runs[1:], self.differences, strict=True)},
        }


def shared_outcomes(runs: Sequence[Sequence[Sampled]]) -> tuple[list[Sampled], list[list[float]]]:
    """The questions graded in every run with the same content (first run's order) and each run's 1/0
    outcome on them."""
    return outcomes_of(pair_questions(runs, keep=graded))


def outcomes_of(pairing: Pairing[Sampled]) -> tuple[list[Sampled], list[list[float]]]:
    """The first run's sample of each paired question, and each run's 1/0 outcome on them."""
    shared = pairing.samples_of(0)
    outcomes = [[float(bool(s.correct)) for s in pairing.samples_of(i)] for i in range(pairing.runs)]
    return shared, outcomes


def paired_rows(
    runs: Sequence[Sequence[Sampled]], key: str | None, resamples: int = 10_000, seed: int = 0
) -> list[PairedRow]:
    """One row per group of `key` (one row "all" for None)."""
    return grouped_rows(*shared_outcomes(runs), key, resamples, seed)


def grouped_rows(
    shared: Sequence[Sampled],
    outcomes: Sequence[Sequence[float]],
    key: str | None,
    resamples: int = 10_000,
    seed: int = 0,
) -> list[PairedRow]:
    """paired_rows over outcomes already paired by `shared_outcomes` (pair once, group many ways)."""
    return [bootstrapped(group, resamples, seed) for group in paired_groups(shared, outcomes, key)]


@dataclass(frozen=True)
class PairedGroup:
    """A group's row before its bootstraps: how many questions, each run's accuracy, and each run after
    the first against the first (what the bootstrap reads). A few numbers however many questions: what
    `kaoshi compare` keeps in the store (kaoshi.api.studies)."""

    group: str
    n: int
    accuracy: list[float]
    differences: list[Differences]

    def to_json(self) -> list[Any]:
        return [self.group, self.n, self.accuracy, [d.to_json() for d in self.differences]]

    @classmethod
    def from_json(cls, value: Sequence[Any]) -> PairedGroup:
        group, n, accuracy, differences = value
        return cls(group, n, list(accuracy), [Differences.from_json(d) for d in differences])


def paired_groups(
    shared: Sequence[Sampled], outcomes: Sequence[Sequence[float]], key: str | None
) -> list[PairedGroup]:
    """One group per value of `key` (one "all" for None), in order, before the bootstraps."""
    label: Callable[[Sampled], str | None] = GROUP_KEYS[key] if key else (lambda _: "all")
    positions: dict[str, list[int]] = {}
    for i, sample in enumerate(shared):
        positions.setdefault(label(sample) or UNKNOWN_GROUP, []).append(i)
    groups = []
    for group, where in sorted(positions.items()):
        per_run = [[o[i] for i in where] for o in outcomes]
        groups.append(
            PairedGroup(
                group,
                len(where),
                [sum(r) / len(r) for r in per_run],
                [paired_differences(per_run[0], other) for other in per_run[1:]],
            )
        )
    return groups


def bootstrapped(group: PairedGroup, resamples: int = 10_000, seed: int = 0) -> PairedRow:
    """The group's row: each run after the first against the first, by paired bootstrap."""
    return PairedRow(
        group.group,
        group.n,
        group.accuracy,
        [bootstrap_differences(found, resamples, seed) for found in group.differences],
    )


def paired_table(title: str, key: str, names: Sequence[str], rows: Sequence[PairedRow]) -> TextTable:
    baseline = names[0]
    headers = (key, "n", *names, *(f"Δ {n} vs {baseline} [95% CI]" for n in names[1:]))
    text_rows = []
    values: list[list[float | None]] = []
    for row in rows:
        deltas = [_delta_text(d) for d in row.differences]
        text_rows.append([row.group, str(row.n), *(f"{100 * a:.1f}%" for a in row.accuracy), *deltas])
        values.append([None, None, *row.accuracy, *([None] * len(deltas))])
    return TextTable(
        title,
        headers,
        text_rows,
        frozenset(mark_best(values)),
        note="accuracy on the questions every run graded; Δ in points (paired bootstrap), * when the "
        "interval excludes 0",
    )


def _delta_text(d: BootstrapResult) -> str:
    mark = " *" if d.low > 0 or d.high < 0 else ""
    return f"{100 * d.difference:+.1f} [{100 * d.low:+.1f}, {100 * d.high:+.1f}]{mark}"
