"""The progress bar of the long commands (run, judge, vote, rescore).

The rate is this process's answers over the seconds since its first request, not rich's windowed speed
(a backend returning a batch at once made that spike to thousands a second, then freeze between batches);
answers already stored when a run resumes count toward the bar but not the rate. Elapsed time and ETA
refresh while answers are awaited. Off a terminal (a log, CI) the bar is silent.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.text import Text

Clock = Callable[[], float]


@dataclass
class Throughput:
    """Answers this process got since its first request (`started`), and the rate and ETA they give."""

    total: int
    stored_before: int  # answers already stored when it started: on the bar, not in the rate
    started: float
    clock: Clock = field(default=time.monotonic, repr=False)
    got: int = 0
    ended: float | None = None  # when its last answer came, or another bar took over: its clock stops
    spent: float | None = None  # what this process's answers cost (None: no price given)

    def count(self, cost: float | None = None) -> None:
        """One more answer, and what it cost where the run has a price."""
        self.got += 1
        if cost is not None:
            self.spent = (self.spent or 0.0) + cost
        if not self.remaining:
            self.stop()

    def stop(self) -> None:
        if self.ended is None:
            self.ended = self.clock()

    @property
    def elapsed(self) -> float:
        now = self.clock() if self.ended is None else self.ended
        return max(0.0, now - self.started)

    @property
    def remaining(self) -> int:
        return max(0, self.total - self.stored_before - self.got)

    @property
    def rate(self) -> float | None:
        """Answers a second; None before the first answer."""
        elapsed = self.elapsed
        return self.got / elapsed if self.got and elapsed > 0 else None

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far; None while there is no rate."""
        if not self.remaining:
            return 0.0
        rate = self.rate
        return self.remaining / rate if rate else None

    def describe(self, unit: str) -> str:
        """e.g. '2.5 q/s  elapsed 0:00:30  ETA 0:00:30'; '4.0 s/answer' when slower than one a second."""
        rate, eta = self.rate, self.eta
        parts = [] if rate is None else [format_rate(rate, unit)]
        parts.append(f"elapsed {format_seconds(self.elapsed)}")
        if self.remaining:
            parts.append("ETA " + ("-:--:--" if eta is None else format_seconds(eta)))
        if self.spent is not None:
            cost = f"cost {self.spent:,.4f}"
            if self.remaining and self.got:  # the answers to come at the mean cost of those so far
                cost += f", about {self.spent + self.spent / self.got * self.remaining:,.4f} at the end"
            parts.append(cost)
        return "  ".join(parts)


def format_rate(rate: float, unit: str) -> str:
    return f"{rate:.1f} {unit}/s" if rate >= 1 else f"{1 / rate:.1f} s/{unit}"


def format_seconds(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class _ThroughputColumn(ProgressColumn):
    """Rate, elapsed time and ETA from the task's Throughput, redrawn on every refresh."""

    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        throughput: Throughput = task.fields["throughput"]
        return Text(throughput.describe(self.unit), style="progress.data.speed")


class ProgressBar:
    """A bar per planned pass: `plan(total, done)` starts one, `advance(item)` counts an answer.

    Use as a context manager; its `plan` and `advance` are the library's on_plan and per-item callbacks.
    """

    def __init__(
        self,
        description: str,
        unit: str,
        *,
        console: Console | None = None,
        clock: Clock = time.monotonic,
        cost_of: Callable[[Any], float] | None = None,
    ) -> None:
        """`cost_of`: what an answer (the item `advance` is given) cost, for a run with a price: the bar
        then shows what the answers so far cost and projects the run's cost at their mean."""
        console = console or Console(file=sys.stderr)
        self.description, self.clock, self.cost_of = description, clock, cost_of
        self._progress = Progress(
            TextColumn("{task.description}", style="bold", markup=False),  # a run's name as it is
            BarColumn(),
            MofNCompleteColumn(),
            _ThroughputColumn(unit),
            console=console,
            disable=not console.is_terminal,
            transient=False,
        )
        self._task: TaskID | None = None
        self._throughput: Throughput | None = None

    def __enter__(self) -> ProgressBar:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._throughput is not None:
            self._throughput.stop()  # the last frame shows the time it took, not the time of its drawing
        self._progress.__exit__(None, None, None)

    def plan(self, total: int, done: int, description: str | None = None) -> None:
        """Start a bar of `total` answers, `done` of them stored before; its clock starts now (and the
        previous bar's stops)."""
        if self._throughput is not None:
            self._throughput.stop()
        self._throughput = Throughput(total, done, self.clock(), self.clock)
        self._task = self._progress.add_task(
            description or self.description, total=total, completed=done, throughput=self._throughput
        )

    def status(self, text: str) -> bool:
        """Show `text` as the bar's description (e.g. what the run waits on); False off a terminal, where
        the bar shows nothing."""
        if self._progress.disable or self._task is None:
            return False
        self._progress.update(self._task, description=text)
        return True

    def advance(self, item: object = None) -> None:
        """Count one answer (the item is read only for its cost, with `cost_of`)."""
        if self._task is None or self._throughput is None:
            return
        self._throughput.count(self.cost_of(item) if self.cost_of is not None else None)
        self._progress.advance(self._task)
