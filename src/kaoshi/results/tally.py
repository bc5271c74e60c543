"""Counts over a set of samples: what every exam's summary is made of, overall and per group."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

from kaoshi.analysis.stats import exact_sum, wilson_interval
from kaoshi.store.columns import ScoreRow, score_row
from kaoshi.store.records import SampleRecord, SampleStatus


@dataclass(frozen=True)
class Tally:
    """Counts over a set of samples.

    graded: answers with a grade and no error: objective ones checked against the gold answer (unparsed
    answers are graded, as wrong, because the model did answer) and open ones a judge has scored
    (`judged`). An open answer whose judge reply was unparsed is ungraded and earns no points.
    accuracy = correct / checked, over the objective answers only. points / max_points: over every
    sample that has a score; scored counts those, so the points always cover the graded answers.
    truncated: graded answers the backend cut off at the token budget (finish_reason "length").
    """

    n: int = 0
    graded: int = 0
    judged: int = 0
    correct: int = 0
    unparsed: int = 0
    ambiguous: int = 0
    errors: int = 0
    ungraded: int = 0
    scored: int = 0
    points: float = 0.0
    max_points: float = 0.0
    truncated: int = 0

    @property
    def checked(self) -> int:
        """Objective answers checked against the gold answer: the accuracy's denominator."""
        return self.graded - self.judged

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.checked if self.checked else None

    def add(self, sample: SampleRecord) -> Tally:
        return Tally.total([(self._counts(), 1), (sample_counts(score_row(sample)), 1)])

    @classmethod
    def total(cls, rows: Iterable[tuple[Counts, int]]) -> Tally:
        """The tally of per-sample counts (`sample_counts`), each with how many samples have them. Points
        are summed exactly (as fractions, rounded once), so a tally does not depend on the order its
        samples were stored or counted in."""
        # rows adding the same counts are added up first: a run's thousands of kinds of row add a few dozen
        # distinct counts (summed as columns, they were a twentieth of a report of a stored run)
        samples: dict[Counts, int] = {}
        for counted, weight in rows:
            samples[counted] = samples.get(counted, 0) + weight
        if not samples:
            return cls()
        # the counts as columns, each summed at C speed (a generator a count took a tenth of a report)
        counts, weights = zip(*samples.items(), strict=True)
        sums: dict[str, Any] = {}
        for (name, zero), column in zip(_COUNTED, zip(*counts, strict=True), strict=True):
            if isinstance(zero, float) and all(float(value).is_integer() for value in set(column)):
                # whole points, as most exams give: exact_sum's integers, added at C speed
                sums[name] = float(sum(map(operator.mul, map(int, column), weights)))
            elif isinstance(zero, float):
                sums[name] = exact_sum(zip(column, weights, strict=True))
            else:
                sums[name] = sum(map(operator.mul, column, weights))
        return cls(**sums)

    def _counts(self) -> Counts:
        return tuple(getattr(self, name) for name, _ in _COUNTED)

    @property
    def points_rate(self) -> float | None:
        """Points earned as a share of the points available over the scored samples."""
        return self.points / self.max_points if self.max_points else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """95% Wilson interval of the accuracy."""
        return wilson_interval(self.correct, self.checked) if self.checked else None

    def to_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "interval": list(self.interval) if self.interval else None,
            "correct": self.correct,
            "graded": self.graded,
            "judged": self.judged,
            "unparsed": self.unparsed,
            "ambiguous": self.ambiguous,
            "errors": self.errors,
            "ungraded": self.ungraded,
            "scored": self.scored,
            "points": self.points,
            "max_points": self.max_points,
            "truncated": self.truncated,
        }


# What one sample adds to each of a Tally's counts, in field order.
Counts = tuple[int, int, int, int, int, int, int, int, int, float, float, int]
_COUNTED: tuple[tuple[str, Any], ...] = tuple((f.name, f.default) for f in fields(Tally))  # (name, zero)


# What sample_counts reads of a row.
_COUNTED_FIELDS = operator.itemgetter(
    *(ScoreRow._fields.index(name) for name in ("status", "correct", "score", "points", "truncated"))
)


def rows_counts(rows: Iterable[ScoreRow]) -> list[Counts]:
    """sample_counts of each row, computed once for the rows that agree on what it reads (a run's
    thousands of kinds of row add a few dozen distinct counts)."""
    computed: dict[Any, Counts] = {}
    found = []
    for row in rows:
        read = _COUNTED_FIELDS(row)
        counts = computed.get(read)
        if counts is None:
            counts = computed[read] = sample_counts(row)
        found.append(counts)
    return found


def sample_counts(row: ScoreRow) -> Counts:
    """What one sample (its score row, open answers' grades folded in) adds to a Tally."""
    is_error = row.status == SampleStatus.ERROR
    is_checked = not is_error and row.correct is not None
    # An open answer has no `correct`; it is graded once a judge's score has been folded in.
    is_judged = not is_error and row.correct is None and row.score is not None
    is_ungraded = not is_error and not is_checked and not is_judged
    has_score = not is_error and row.score is not None
    return (
        1,
        is_checked + is_judged,
        int(is_judged),
        int(bool(row.correct)),
        int(row.status == SampleStatus.UNPARSED),
        int(row.status == SampleStatus.AMBIGUOUS),
        int(is_error),
        int(is_ungraded),
        int(has_score),
        row.score or 0.0 if has_score else 0.0,
        row.points if has_score else 0.0,
        int(row.truncated and (is_checked or is_judged)),
    )
