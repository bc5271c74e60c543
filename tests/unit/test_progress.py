"""The progress bar's rate, elapsed time and ETA, on an injected clock (no sleeps, no real time)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from kaoshi.cli.progress import ProgressBar, Throughput, format_rate, format_seconds


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_rate_is_this_process_answers_over_the_time_since_its_first_request() -> None:
    clock = Clock()
    meter = Throughput(total=150, stored_before=30, started=clock(), clock=clock)
    assert (meter.rate, meter.eta, meter.remaining) == (None, None, 120)  # no answer yet: no rate
    clock.now += 60  # a minute of waiting for the first batch
    assert meter.rate is None and meter.elapsed == 60
    assert meter.describe("q") == "elapsed 0:01:00  ETA -:--:--"
    meter.got += 64  # the batch arrives at once: 64 answers in 60 s, not thousands a second
    assert meter.rate == pytest.approx(64 / 60)
    assert meter.eta == pytest.approx(56 / (64 / 60))
    clock.now += 50  # nothing for 50 s: the rate falls and the ETA grows, nothing is frozen
    assert meter.rate == pytest.approx(64 / 110)
    assert meter.eta == pytest.approx(56 * 110 / 64)
    for _ in range(56):
        meter.count()
    assert meter.remaining == 0 and meter.eta == 0.0
    clock.now += 100  # done: its clock stopped with the last answer
    assert meter.describe("q") == "1.1 q/s  elapsed 0:01:50"


def test_answers_stored_before_a_resume_count_on_the_bar_not_in_the_rate() -> None:
    clock = Clock()
    meter = Throughput(total=100, stored_before=90, started=clock(), clock=clock)
    clock.now += 5
    meter.got += 5
    assert meter.rate == pytest.approx(1.0)  # 5 answers in 5 s; the 90 stored ones took no time here
    assert meter.eta == pytest.approx(5.0)
    assert meter.describe("q") == "1.0 q/s  elapsed 0:00:05  ETA 0:00:05"


def test_a_clock_that_has_not_moved_gives_no_rate() -> None:
    clock = Clock()
    meter = Throughput(total=10, stored_before=0, started=clock(), clock=clock)
    meter.got = 3
    assert meter.rate is None and meter.eta is None


@pytest.mark.parametrize(
    ("rate", "shown"),
    [(2.5, "2.5 q/s"), (1.0, "1.0 q/s"), (0.25, "4.0 s/q"), (1 / 30, "30.0 s/q")],
)
def test_slow_rates_read_as_seconds_per_answer(rate: float, shown: str) -> None:
    assert format_rate(rate, "q") == shown


@pytest.mark.parametrize(("seconds", "shown"), [(0, "0:00:00"), (59.9, "0:00:59"), (3725, "1:02:05")])
def test_format_seconds(seconds: float, shown: str) -> None:
    assert format_seconds(seconds) == shown


def _frames(output: str) -> list[str]:
    """The lines a terminal console drew, control codes removed."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output)
    return [line.strip() for line in re.split(r"[\r\n]", plain) if line.strip()]


def test_the_bar_shows_count_rate_elapsed_and_eta_on_a_terminal() -> None:
    clock = Clock()
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with ProgressBar("evaluating", "q", console=console, clock=clock) as bar:
        bar.plan(150, 30)
        clock.now += 30
        for _ in range(60):
            bar.advance()
    last = _frames(out.getvalue())[-1]
    assert last.startswith("evaluating")
    assert last.endswith("90/150 2.0 q/s  elapsed 0:00:30  ETA 0:00:30")


def test_each_plan_is_a_bar_of_its_own() -> None:
    clock = Clock()
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with ProgressBar("judging", "answer", console=console, clock=clock) as bar:
        bar.plan(4, 0, "debate round 1")
        clock.now += 8
        for _ in range(4):
            bar.advance()
        bar.plan(4, 1, "debate round 2")
        clock.now += 30
        for _ in range(3):
            bar.advance()
    frames = _frames(out.getvalue())
    # the first bar's clock stopped with its last answer, not when the second bar started or ended
    assert frames[-2].startswith("debate round 1") and frames[-2].endswith(
        "4/4 2.0 s/answer  elapsed 0:00:08"
    )
    assert frames[-1].startswith("debate round 2") and frames[-1].endswith(
        "4/4 10.0 s/answer  elapsed 0:00:30"
    )


def test_the_bar_is_silent_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(variable, raising=False)
    out = io.StringIO()
    with ProgressBar("evaluating", "q", console=Console(file=out)) as bar:
        bar.plan(3, 0)
        for _ in range(3):
            bar.advance()
    assert out.getvalue() == ""


def test_answers_before_a_plan_are_ignored() -> None:
    out = io.StringIO()
    with ProgressBar("evaluating", "q", console=Console(file=out, force_terminal=True)) as bar:
        bar.advance()  # a callback may come before any plan: nothing to count it on
    assert "evaluating" not in out.getvalue()


def test_a_priced_run_shows_what_its_answers_cost_and_projects_the_rest_at_their_mean() -> None:
    clock = Clock()
    meter = Throughput(total=100, stored_before=20, started=clock(), clock=clock)
    clock.now += 10
    for cost in (0.01, 0.03):
        meter.count(cost)
    # 2 answers cost 0.04: the 78 still to come at 0.02 each
    assert (
        meter.describe("q") == "5.0 s/q  elapsed 0:00:10  ETA 0:06:30  cost 0.0400, about 1.6000 at the end"
    )
    for _ in range(78):
        meter.count(0.02)
    assert meter.describe("q").endswith("cost 1.6000")  # done: what it cost, nothing projected
    unpriced = Throughput(total=10, stored_before=0, started=clock(), clock=clock)
    unpriced.count()
    assert "cost" not in unpriced.describe("q")


def test_the_bar_reads_each_answers_cost_where_the_run_has_a_price() -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    with ProgressBar("evaluating", "q", console=console, clock=Clock(), cost_of=lambda s: s["cost"]) as bar:
        bar.plan(3, 0)
        bar.advance({"cost": 0.5})
        bar.advance({"cost": 0.25})
        assert bar._throughput is not None and bar._throughput.spent == 0.75
