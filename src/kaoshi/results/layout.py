"""Leaderboard layouts: the columns a benchmark's leaderboard shows and each run's number in them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kaoshi.results.metrics import UNKNOWN_GROUP

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary

MACRO, ACCURACY = "macro", "accuracy"


class LeaderboardLayout(ABC):
    """One benchmark's leaderboard columns. Runs are ranked by the `headline` value, highest first."""

    note = ""  # said under the table, e.g. how the columns average

    @property
    def headline(self) -> str:
        return ACCURACY

    @abstractmethod
    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        """The number columns for these runs (each summarised on the questions all of them answered)."""

    @abstractmethod
    def values(self, summary: RunSummary) -> dict[str, float | None]:
        """One run's numbers by column, the headline included; a column it lacks shows as —."""

    def coverage(self, summary: RunSummary) -> dict[str, tuple[int, int]]:
        """For columns that average over groups: (groups the run has, groups the benchmark's own average
        takes); a cell with fewer says so."""
        return {}

    def cell_text(self, column: str, value: float | None) -> str | None:
        """A cell as text where the column is not a rate (points, say); None: shown as a percentage."""
        return None


class DomainLayout(LeaderboardLayout):
    """A column per domain, their macro mean, and accuracy over questions: the layout unless a benchmark
    has its own."""

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:

        domains = sorted({d for s in summaries for d in s.groups.get("domain", {}) if d != UNKNOWN_GROUP})
        return [*domains, MACRO, ACCURACY] if domains else [ACCURACY]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        groups = summary.groups.get("domain", {})
        values: dict[str, float | None] = {name: tally.accuracy for name, tally in groups.items()}
        values[MACRO] = summary.macro.get("domain")
        values[ACCURACY] = summary.overall.accuracy
        return values
