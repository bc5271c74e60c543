"""How much of its exam a run covers, and whether it is complete.

A run is complete when every question it was asked has a stored answer without error and the run has
finished. Errors (retried on resume), questions not yet stored, and a run still running or interrupted
(stopped before finishing) make it incomplete; unreadable answers and ungraded open answers do not, since the
model did answer.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat

from kaoshi.store.pairing import Answered, AnswerRow, KeyRow
from kaoshi.store.records import RunRecord, RunStatus, SampleStatus


@dataclass(frozen=True)
class Coverage:
    run: str
    questions: int  # the questions the run was asked (its spec)
    answered: int  # stored with an output (unreadable ones included), errors not
    graded: int  # of those, marked right or wrong, or scored (open answers once judged)
    errors: int
    running: bool  # not finished: still running, or interrupted before the end

    @property
    def missing(self) -> int:
        """Questions with nothing stored yet."""
        return max(0, self.questions - self.answered - self.errors)

    @property
    def complete(self) -> bool:
        return not (self.errors or self.missing or self.running)

    def problems(self) -> list[str]:
        """What makes the run incomplete, in words (empty when complete)."""
        found = [f"{self.errors} errors"] if self.errors else []
        found += [f"{self.missing} missing"] if self.missing else []
        return found + (["not finished"] if self.running else [])

    @property
    def status(self) -> str:
        """`complete`, or `incomplete: 150 errors, not finished`."""
        return "complete" if self.complete else "incomplete: " + ", ".join(self.problems())

    @property
    def short(self) -> str:
        """Answered out of asked, with the reasons when incomplete: `300/300`, `150/300 incomplete:
        150 errors`. An incomplete run never reads as all answered."""
        done = f"{self.answered}/{self.questions}"
        return done if self.complete else f"{done} {self.status}"

    def to_json(self) -> dict[str, object]:
        return {
            "run": self.run,
            "questions": self.questions,
            "answered": self.answered,
            "graded": self.graded,
            "errors": self.errors,
            "missing": self.missing,
            "running": self.running,
            "complete": self.complete,
        }


def run_coverage(run: RunRecord, samples: Iterable[Answered]) -> Coverage:
    """The run's coverage from its record and its stored samples (counted at C speed: a board counts a
    million)."""
    items = list(samples)
    statuses = list(map(operator.attrgetter("status"), items))
    errors = operator.countOf(statuses, SampleStatus.ERROR)
    n_answered = len(items) - errors
    # answered samples with neither a check nor a score: not graded
    unscored = zip(
        map(operator.ne, statuses, repeat(SampleStatus.ERROR)),
        map(operator.is_, map(operator.attrgetter("correct"), items), repeat(None)),
        map(operator.is_, map(operator.attrgetter("score"), items), repeat(None)),
        strict=True,
    )
    n_graded = n_answered - operator.countOf(map(all, unscored), True)
    return _coverage(run, n_answered, n_graded, errors)


def key_coverage(run: RunRecord, rows: Sequence[KeyRow | AnswerRow]) -> Coverage:
    """run_coverage from the run's key rows (kaoshi.store.columns.pair_keys: status, correct and score
    read by place)."""
    statuses = list(map(operator.itemgetter(2), rows))
    errors = operator.countOf(statuses, SampleStatus.ERROR)
    n_answered = len(rows) - errors
    unscored = zip(
        map(operator.ne, statuses, repeat(SampleStatus.ERROR)),
        map(operator.is_, map(operator.itemgetter(3), rows), repeat(None)),
        map(operator.is_, map(operator.itemgetter(4), rows), repeat(None)),
        strict=True,
    )
    return _coverage(run, n_answered, n_answered - operator.countOf(map(all, unscored), True), errors)


def counted_coverage(run: RunRecord, answered: int, graded: int, errors: int) -> Coverage:
    """The run's coverage from its samples as counted (a kept summary's: kaoshi.store.summaries), its
    questions and status from its record as it is now."""
    return _coverage(run, answered, graded, errors)


def _coverage(run: RunRecord, n_answered: int, n_graded: int, errors: int) -> Coverage:
    spec = run.spec
    asked = spec.asked_questions
    return Coverage(run.name, asked, n_answered, n_graded, errors, run.status != RunStatus.FINISHED)
