"""The subject-category leaderboard (C-Eval's convention, for CMMLU, FinEval and M3KE): a column per
category, each the mean of its subjects' accuracies, and the mean over all subjects, which ranks the runs.
A subject may count in more than one category (CMMLU's China-specific subjects also count in their own)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from kaoshi.results.layout import LeaderboardLayout
from kaoshi.results.metrics import UNKNOWN_GROUP

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary

AVERAGE = "Average"


class SubjectLayout(LeaderboardLayout):
    """`membership`: subject -> the categories it counts in; `categories`: the column order."""

    def __init__(
        self,
        membership: Mapping[str, Sequence[str]],
        categories: Sequence[str],
        *,
        average: str = AVERAGE,
        note: str = "",
    ) -> None:
        unknown = sorted({c for cs in membership.values() for c in cs} - set(categories))
        if unknown:
            raise ValueError(f"subjects counted in categories that are no column: {', '.join(unknown)}")
        self.membership = {subject: tuple(cs) for subject, cs in membership.items()}
        self.categories = tuple(categories)
        self.average = average
        self.note = note or (
            "categories are means of subject accuracies, Average is over all subjects; (n/N): the average "
            "covers n of the N subjects the benchmark averages over"
        )

    @property
    def headline(self) -> str:
        return self.average

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        return [*self.categories, self.average]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        accuracies = subject_accuracies(summary)
        by_category: dict[str, list[float]] = {c: [] for c in self.categories}
        for subject, accuracy in accuracies.items():
            for category in self.membership.get(subject, ()):
                by_category[category].append(accuracy)
        values: dict[str, float | None] = {c: _mean(v) for c, v in by_category.items()}
        values[self.average] = _mean(list(accuracies.values()))
        return values

    def coverage(self, summary: RunSummary) -> dict[str, tuple[int, int]]:
        graded = set(subject_accuracies(summary))
        members: dict[str, set[str]] = {c: set() for c in self.categories}
        for subject, categories in self.membership.items():
            for category in categories:
                members[category].add(subject)
        members[self.average] = set(self.membership)
        return {c: (len(graded & subjects), len(subjects)) for c, subjects in members.items()}


def subject_accuracies(summary: RunSummary) -> dict[str, float]:
    """Each graded subject's accuracy (a subject with no graded answer, e.g. withheld labels, is left out)."""

    subjects = summary.groups.get("subject", {})
    return {
        name: t.accuracy for name, t in subjects.items() if t.accuracy is not None and name != UNKNOWN_GROUP
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
