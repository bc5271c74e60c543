"""What a benchmark adds to its runs' reports: its own numbers, each computed from the run's summary and
the samples it was made from, as columns (RunSummary.kinds).

The core tallies what every exam has (counts, accuracy, intervals, points, groups); a benchmark whose
protocol reports more (an F1 over answer strings, category averages, exam totals) lists `Metric`s on its
Benchmark, and the API measures them when it summarises a stored run of that benchmark. The reports render
whatever measurements the summary holds (kaoshi.results.measurement).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from kaoshi.results.measurement import MeasuredTable, Measurement
from kaoshi.results.metrics import Pairs, category_means

if TYPE_CHECKING:  # a benchmark declares its metrics without importing the summaries' machinery
    from kaoshi.results.aggregate import RunSummary


def percent_text(value: float | None) -> str:
    """A share as the reports show it: `63.2%`, or `—` where there is none."""
    return "—" if value is None else f"{100 * value:.1f}%"


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
    show: Callable[[float], str] = percent_text
    higher_is_better: bool = True
    rate: bool = True

    def measure(self, summary: RunSummary) -> Measurement | None:
        value = self.compute(summary)
        if value is None:
            return None
        return Measurement(self.label, value, self.show(value), self.higher_is_better, self.rate)


@dataclass(frozen=True)
class AnswerStatistic:
    """A statistic over a run's checked answers taken as strings, (gold, answer) pairs counted
    (kaoshi.results.metrics: pr_f1, weighted_f1): measured over the run and, where `column` names the
    column it adds to the tally tables, within each group of every grouping the summary has. `name`: its
    name among the run's numbers and in JSON."""

    label: str
    statistic: Callable[[Pairs], float | None]
    name: str
    column: str = ""

    def measure(self, summary: RunSummary) -> Measurement:
        value = self.statistic(summary.kinds.answer_pairs())
        by_group = {}
        if self.column:
            for grouping, tallies in summary.groups.items():
                pairs = summary.kinds.answer_pairs_by(grouping)
                by_group[grouping] = {group: self.statistic(pairs.get(group, {})) for group in tallies}
        return Measurement(
            self.label,
            value,
            percent_text(value),
            name=self.name,
            column=self.column,
            by_group=by_group,
            objective=True,
        )


@dataclass(frozen=True)
class CategoryMeans:
    """Each category the mean of its subjects' accuracies and `overall` the mean over every subject
    (kaoshi.results.metrics.category_means), shown as a table of its own with the categories of `order`
    first, any other after them alphabetically, then `overall`; none where no subject has a category."""

    overall: str
    order: Sequence[str] = ()
    label: str = "category averages"
    name: str = "category_average"
    note: str = ""

    def measure(self, summary: RunSummary) -> Measurement | None:
        kinds = summary.kinds
        if not kinds.category_of:
            return None
        subjects = kinds.tallies_by("subject")
        means = category_means(subjects, kinds.category_of, self.overall)
        known = [c for c in self.order if c in means]
        others = sorted(c for c in means if c not in self.order and c != self.overall)
        columns = [*known, *others, self.overall]
        table = MeasuredTable(
            self.label,
            ("", *columns),
            (("accuracy", *(percent_text(means.get(c)) for c in columns)),),
            self.note,
        )
        return Measurement(self.label, None, "", name=self.name, parts=means, table=table, objective=True)


def measure_all(metrics: Iterable[Metric], summary: RunSummary) -> tuple[Measurement, ...]:
    """The measurements of `metrics` the run has (a metric without data is left out)."""
    return tuple(m for m in (metric.measure(summary) for metric in metrics) if m is not None)


def measured(summary: RunSummary, metrics: Iterable[Metric]) -> RunSummary:
    """The summary with the measurements of a benchmark's `metrics`."""
    return replace(summary, measurements=measure_all(metrics, summary))
