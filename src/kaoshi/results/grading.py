"""Open answers' points from a grader: which grader's grades a run's numbers fold in, and how they are folded
into its samples (the report, the leaderboard, the viewer and the judge read them the same way)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of
from kaoshi.store.columns import ScoreRow
from kaoshi.store.records import GradeRecord, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store


def apply_grades(samples: Iterable[SampleRecord], grades: Mapping[str, GradeRecord]) -> list[SampleRecord]:
    """Samples with the open answers' points filled in from a grader (ungraded ones left as they are)."""
    return list(graded(samples, grades))


def graded(samples: Iterable[SampleRecord], grades: Mapping[str, GradeRecord]) -> Iterator[SampleRecord]:
    """apply_grades one sample at a time, for samples streamed rather than held."""
    for sample in samples:
        grade = grades.get(sample.question_id)
        if not kind_of(sample.qtype).objective and grade is not None and grade.points is not None:
            sample = replace(sample, score=grade.points)
        yield sample


def apply_grade_rows(rows: Iterable[ScoreRow]) -> list[ScoreRow]:
    """apply_grades for rows read with a grader's points (kaoshi.store.columns): the same rule."""
    return [
        row._replace(score=row.graded_points)
        if row.graded_points is not None and not kind_of(row.qtype).objective
        else row
        for row in rows
    ]


def chosen_grader(store: Store, run: str, grader: str | None) -> str | None:
    """`grader`, or the run's most recent judge setup when None (None: the run has no grades); InputError
    for a grader that has not graded the run."""
    graders = store.graders(run)
    if grader is None and not graders:
        return None
    chosen = grader or graders[-1]
    if chosen not in graders:
        known = ", ".join(graders) or "none yet (kaoshi judge)"
        raise InputError(f"run {run!r} has no grades by {chosen!r} (graders: {known})")
    return chosen


@dataclass(frozen=True)
class GradedSamples:
    """A run's samples with open answers scored by `grader` (None: the run has no grades yet)."""

    samples: list[SampleRecord]
    grader: str | None
    grades: dict[str, GradeRecord]


def load_graded(
    store: Store,
    run: str,
    grader: str | None = None,
    samples: list[SampleRecord] | None = None,
    *,
    light: bool = False,
) -> GradedSamples:
    """The run's samples with the grades of `grader`, or of the most recent judge setup when None;
    `samples`: the run's samples when the caller has read them already; `light`: read without what a
    summary never reads (Store.iter_samples)."""
    samples = store.samples(run, light=light) if samples is None else samples
    chosen, grades = chosen_grades(store, run, grader)
    if chosen is None:
        return GradedSamples(samples, None, {})
    return GradedSamples(apply_grades(samples, grades), chosen, grades)


def chosen_grades(store: Store, run: str, grader: str | None) -> tuple[str | None, dict[str, GradeRecord]]:
    """The grader whose grades count (chosen_grader) and its grades of the run's open answers (none
    without one)."""
    chosen = chosen_grader(store, run, grader)
    return chosen, ({} if chosen is None else store.grades(run, chosen))


@dataclass(frozen=True)
class StoredSamples:
    """A run's samples (its first a question, in question order) with `grades` folded in, read from the
    open store each time they are iterated and never held: what a command showing every sample streams
    (kaoshi html). `light`: without what a summary never reads; `status`: only those (Store.iter_samples)."""

    store: Store
    run: str
    grades: Mapping[str, GradeRecord] = field(default_factory=dict)
    light: bool = False
    status: SampleStatus | None = None

    def __iter__(self) -> Iterator[SampleRecord]:
        samples = self.store.iter_samples(self.run, light=self.light, status=self.status)
        return graded(samples, self.grades)
