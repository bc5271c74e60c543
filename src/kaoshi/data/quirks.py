"""Quirks of a benchmark's published files: rows that load, read the way the benchmark's own code reads
them, but that differ from the benchmark's documented layout. Each kind of quirk becomes one warning with
its count and the first few `file:line`s, never a refusal and never a silently dropped row."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

SHOWN_LOCATIONS = 3


@dataclass
class QuirkLog:
    """Collects quirk locations by description while a loader reads; `warnings()` renders one line each."""

    _seen: dict[str, list[str]] = field(default_factory=dict)

    def note(self, description: str, file: str, line: int | None, label: str | None = None) -> None:
        """One row with this quirk, at file:line; `label` names it further (a question id)."""
        where = file if line is None else f"{file}:{line}"
        if label is not None:
            where += f" ({label})"
        self._seen.setdefault(description, []).append(where)

    def extend(self, other: QuirkLog) -> None:
        for description, places in other._seen.items():
            self._seen.setdefault(description, []).extend(places)

    def count(self, description: str | None = None) -> int:
        if description is not None:
            return len(self._seen.get(description, ()))
        return sum(len(places) for places in self._seen.values())

    def warnings(self) -> tuple[str, ...]:
        return tuple(quirk_warning(description, places) for description, places in self._seen.items())


def quirk_warning(description: str, places: Iterable[str]) -> str:
    """'4 row(s) <description>: a:1, a:7, b:2 and 1 more'."""
    listed = list(places)
    shown = ", ".join(listed[:SHOWN_LOCATIONS])
    more = f" and {len(listed) - SHOWN_LOCATIONS} more" if len(listed) > SHOWN_LOCATIONS else ""
    return f"{len(listed)} row(s) {description}: {shown}{more}"
