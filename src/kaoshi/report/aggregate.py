"""Summaries of a run's samples: overall and grouped. Errors and ungraded answers never count as wrong."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kaoshi.store.records import SampleRecord

GROUP_KEYS: dict[str, Callable[[SampleRecord], str | None]] = {
    "domain": lambda s: s.domain,
    "type": lambda s: s.qtype,
    "subject": lambda s: s.subject,
    "category": lambda s: s.category,
}
UNKNOWN_GROUP = "(none)"


@dataclass(frozen=True)
class Tally:
    """Counts over a set of samples.

    graded: objective samples with a gold answer and no error; unparsed answers are graded (as wrong)
    because the model did answer. accuracy = correct / graded.
    """

    n: int = 0
    graded: int = 0
    correct: int = 0
    unparsed: int = 0
    ambiguous: int = 0
    errors: int = 0
    ungraded: int = 0
    points: float = 0.0
    max_points: float = 0.0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.graded if self.graded else None

    def add(self, sample: SampleRecord) -> Tally:
        is_error = sample.status == "error"
        is_graded = not is_error and sample.correct is not None
        is_ungraded = not is_error and sample.correct is None
        return Tally(
            n=self.n + 1,
            graded=self.graded + is_graded,
            correct=self.correct + bool(sample.correct),
            unparsed=self.unparsed + (sample.status == "unparsed"),
            ambiguous=self.ambiguous + (sample.status == "ambiguous"),
            errors=self.errors + is_error,
            ungraded=self.ungraded + is_ungraded,
            points=self.points + ((sample.score or 0.0) if is_graded else 0.0),
            max_points=self.max_points + (sample.points if is_graded else 0.0),
        )

    def to_json(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "correct": self.correct,
            "graded": self.graded,
            "unparsed": self.unparsed,
            "ambiguous": self.ambiguous,
            "errors": self.errors,
            "ungraded": self.ungraded,
            "points": self.points,
            "max_points": self.max_points,
        }


@dataclass(frozen=True)
class RunSummary:
    run: str
    overall: Tally
    groups: dict[str, dict[str, Tally]]

    def to_json(self) -> dict[str, object]:
        return {
            "run": self.run,
            **self.overall.to_json(),
            "groups": {
                key: {name: tally.to_json() for name, tally in table.items()}
                for key, table in self.groups.items()
            },
        }


def summarize(
    run: str, samples: Iterable[SampleRecord], group_by: Iterable[str] = tuple(GROUP_KEYS)
) -> RunSummary:
    keys = list(group_by)
    unknown = [k for k in keys if k not in GROUP_KEYS]
    if unknown:
        raise ValueError(f"cannot group by {unknown[0]!r} (choose from {', '.join(GROUP_KEYS)})")
    overall = Tally()
    groups: dict[str, dict[str, Tally]] = {key: {} for key in keys}
    for sample in samples:
        overall = overall.add(sample)
        for key in keys:
            name = GROUP_KEYS[key](sample) or UNKNOWN_GROUP
            table = groups[key]
            table[name] = table.get(name, Tally()).add(sample)
    ordered = {key: dict(sorted(table.items())) for key, table in groups.items()}
    return RunSummary(run, overall, ordered)
