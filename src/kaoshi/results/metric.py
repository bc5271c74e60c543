"""What a benchmark adds to its runs' reports: its own numbers, each computed from the run's summary.

The core tallies what every exam has (accuracy, points, F1); a benchmark whose protocol reports more
(GAOKAO-Bench's exam totals) lists `Metric`s on its Benchmark, and the API measures them when it
summarises a stored run of that benchmark. The report renders whatever measurements the summary holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary


@dataclass(frozen=True)
class Measurement:
    """One metric's value for one run: `value` for JSON and comparisons, `text` as the report shows it."""

    label: str
    value: float | None
    text: str
    higher_is_better: bool = True

    def to_json(self) -> dict[str, object]:
        return {"value": self.value, "text": self.text, "higher_is_better": self.higher_is_better}


class Metric(Protocol):
    """A number a benchmark reports for a run; None when the run has nothing it is computed from."""

    @property
    def label(self) -> str: ...

    def measure(self, summary: RunSummary) -> Measurement | None: ...


@dataclass(frozen=True)
class SummaryMetric:
    """A Metric from a function of the summary; `show` turns the value into the report's text
    (default: a percentage)."""

    label: str
    compute: Callable[[RunSummary], float | None]
    show: Callable[[float], str] = lambda value: f"{100 * value:.1f}%"
    higher_is_better: bool = True

    def measure(self, summary: RunSummary) -> Measurement | None:
        value = self.compute(summary)
        if value is None:
            return None
        return Measurement(self.label, value, self.show(value), self.higher_is_better)


def measure_all(metrics: Iterable[Metric], summary: RunSummary) -> tuple[Measurement, ...]:
    """The measurements of `metrics` the run has (a metric without data is left out)."""
    return tuple(m for m in (metric.measure(summary) for metric in metrics) if m is not None)
