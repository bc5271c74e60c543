"""What a benchmark's own metric measured of a run (kaoshi.results.metric), in a form every report renders
the same way: a value and its text, and where the metric says so, a column of the tally tables, named
values and a table of its own. The reports know no benchmark: they render what the measurements hold."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class MeasuredTable:
    """A table a measurement is shown as, beside the run's other tables: its title (after the run's name),
    header, rows of text and the note under it."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Measurement:
    """One metric's value for one run.

    `value` for JSON and comparisons, `text` as the metrics table shows it ("": the measurement is shown
    by its table alone). `rate`: the value is a share, shown as a percentage in comparisons and columns.
    `name`: its name among the run's numbers (kaoshi.results.aggregate.headline_numbers: what a run of k
    samples averages; default `metric.LABEL`). `column`: the header of a column it adds to the tally
    tables, `value` on the overall row and `by_group` (grouping -> group -> value) on each group's.
    `parts`: named values (a category's average), among the run's numbers as NAME.PART. `table`: shown
    as a table of its own. `objective`: computed from the objective answers alone (no judge's points), so
    that a run of k samples averages it over its samples even where the exam has open answers, which are
    judged on the first sample only."""

    label: str
    value: float | None
    text: str
    higher_is_better: bool = True
    rate: bool = True
    name: str = ""
    column: str = ""
    by_group: Mapping[str, Mapping[str, float | None]] = field(default_factory=dict)
    parts: Mapping[str, float | None] = field(default_factory=dict)
    table: MeasuredTable | None = None
    objective: bool = False

    @property
    def number_name(self) -> str:
        """Its name among the run's numbers."""
        return self.name or f"metric.{self.label}"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.number_name,
            "value": self.value,
            "text": self.text,
            "higher_is_better": self.higher_is_better,
            **(
                {"by_group": {key: dict(values) for key, values in self.by_group.items()}}
                if self.by_group
                else {}
            ),
            **({"parts": dict(self.parts)} if self.parts else {}),
        }
