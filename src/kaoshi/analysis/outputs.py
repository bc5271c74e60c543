"""What a run's outputs look like: how many tokens its answers took (and their reasoning), how many were cut
off at the token budget and how many of those loop to it, and the tokens and model time the run cost."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.store.columns import OutputRow, ScoreRow
from kaoshi.store.records import SampleRecord, SampleStatus

# A degenerate loop is recognised by its last characters (repeats_to_the_end): a unit of 1..MAX_PERIOD
# characters repeated at least MIN_REPEATS times, over at least MIN_LOOP_CHARS characters. A sentence of
# 40 characters must come 4 times (160 characters), a unit of 5 (答案是A。) 13 times, a single character
# (a newline) 64 times. Text that merely has a repeating structure (a table, a numbered list) changes its
# content from unit to unit and never repeats exactly.
MAX_PERIOD = 200
MIN_REPEATS = 4
MIN_LOOP_CHARS = 64
TAIL_CHARS = MAX_PERIOD * MIN_REPEATS  # the most of a text the rule reads: it never scans the whole text

# SampleRecord.extracted_by of the answers no model wrote: ranked by log-likelihood (kaoshi.runner.samples)
# or combined by a vote (kaoshi.runner.vote). They have no output tokens and cannot be cut off.
NOT_GENERATED = frozenset({"loglik", "vote"})


def repeats_to_the_end(text: str) -> bool:
    """Whether `text` ends in a loop: for some period p in 1..MAX_PERIOD, its last
    max(MIN_REPEATS × p, MIN_LOOP_CHARS) characters are one unit of p characters said again and again (the
    last time perhaps cut short, as the budget cuts a loop wherever it is). Reads at most TAIL_CHARS
    characters from the end, so a text of any length takes the same time."""
    tail = text[-TAIL_CHARS:]
    if len(tail) < MIN_LOOP_CHARS:  # shorter than any span
        return False
    for period in _periods(tail):
        span = max(MIN_REPEATS * period, MIN_LOOP_CHARS)
        if span > len(tail):  # the span only grows with the period: no longer period can fit either
            return False
        end = tail[-span:]
        # every character equals the one a period before it: the end is a unit of `period` repeated
        if end[period:] == end[:-period]:
            return True
    return False


def _periods(tail: str) -> Iterator[int]:
    """The periods (1..MAX_PERIOD, shortest first) a loop at the end of `tail` can have: those whose
    character a period before the last is the last again, found at C speed (most texts have few, where
    trying each period took a slice of the text)."""
    last = len(tail) - 1
    start = max(0, last - MAX_PERIOD)
    found = tail.rfind(tail[last], start, last)
    while found != -1:
        yield last - found
        found = tail.rfind(tail[last], start, found)


def output_end(response: str | None, reasoning: str | None) -> str:
    """The last TAIL_CHARS characters the model wrote: its reasoning, then its answer text (a reply cut off
    while reasoning has an empty answer, so its reasoning holds the end)."""
    return ((reasoning or "")[-TAIL_CHARS:] + (response or ""))[-TAIL_CHARS:]


def inverted_cdf(ordered: Sequence[int], percent: float) -> int:
    """The `percent` percentile of sorted counts by Hyndman and Fan's definition 1 (numpy's
    `percentile(..., method="inverted_cdf")`, the same float steps): the smallest count that at least
    that share of the answers stay within. It is always a count some answer had: "p99 8,192" then says
    that answers reach the budget, where linear interpolation (numpy's default) would report 8,191.4, a
    length no answer has. Written out rather than importing numpy, which took a tenth of a report's time."""
    return ordered[inverted_cdf_place(len(ordered), percent)]


def inverted_cdf_place(n: int, percent: float) -> int:
    """Where inverted_cdf takes the `percent` percentile of `n` sorted counts."""
    index = n * (percent / 100) - 1
    below = math.floor(index)
    chosen = below + 1 if index - below > 0 else below
    return min(max(chosen, 0), n - 1)


@dataclass(frozen=True)
class CountDistribution:
    """How a count (tokens) is distributed over answers: n answers, the mean, percentiles and the largest."""

    n: int
    mean: float
    p50: int
    p90: int
    p99: int
    max: int

    @classmethod
    def of(cls, counts: Sequence[int]) -> CountDistribution | None:
        """The distribution of `counts`; None when there are none. The definition of_histogram, which a
        profile is made with, gives number for number (the tests hold them equal)."""
        if not counts:
            return None
        ordered = sorted(counts)
        p50, p90, p99 = (inverted_cdf(ordered, q) for q in (50, 90, 99))
        return cls(len(counts), sum(counts) / len(counts), p50, p90, p99, ordered[-1])

    @classmethod
    def of_histogram(cls, histogram: Mapping[int, int]) -> CountDistribution | None:
        """`of` the counts that `histogram` holds (count -> how many answers had it; none below 0): the same
        distribution, the same floats."""
        n = sum(histogram.values())
        if not n:
            return None
        ordered = sorted(value for value, times in histogram.items() if times)
        cumulative, running = [], 0
        for value in ordered:
            running += histogram[value]
            cumulative.append(running)

        def at(place: int) -> int:  # the count at `place` of them sorted
            return ordered[bisect_right(cumulative, place)]

        p50, p90, p99 = (at(inverted_cdf_place(n, q)) for q in (50, 90, 99))
        total = sum(value * histogram[value] for value in ordered)
        return cls(n, total / n, p50, p90, p99, ordered[-1])

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p99": self.p99,
            "max": self.max,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any] | None) -> CountDistribution | None:
        """to_json read back (None for None)."""
        if value is None:
            return None
        return cls(value["n"], value["mean"], value["p50"], value["p90"], value["p99"], value["max"])


@dataclass(frozen=True)
class OutputProfile:
    """What a run's outputs look like.

    answers: samples with an answer; errors are counted apart and left out of every other number.
    generated: the answers the model wrote (the others were ranked by log-likelihood or combined by a vote).
    tokens_out, tokens_reasoning: over the generated answers whose backend counted them (None: none did);
    the reasoning's tokens are part of the output tokens.
    truncated: generated answers cut off at the token budget (graded or not; the summary's `truncated`
    counts the graded ones); loops: those of them that repeat themselves to the budget (repeats_to_the_end).
    Shares are of the generated answers. tokens_in_total: over every answer that has a count;
    tokens_out_total: over the generated ones. model_time_s: the backend's latency summed over the answers
    that have one (timed); model_time_mean_s: per timed answer.
    """

    samples: int
    errors: int
    answers: int
    generated: int
    tokens_out: CountDistribution | None
    tokens_reasoning: CountDistribution | None
    truncated: int
    loops: int
    tokens_in_total: int | None
    tokens_out_total: int | None
    timed: int
    model_time_s: float | None

    @property
    def truncated_share(self) -> float | None:
        return self.truncated / self.generated if self.generated else None

    @property
    def loops_share(self) -> float | None:
        return self.loops / self.generated if self.generated else None

    @property
    def model_time_mean_s(self) -> float | None:
        return None if self.model_time_s is None else self.model_time_s / self.timed

    def to_json(self) -> dict[str, Any]:
        """The profile with every key always present (null where a number is unknown)."""
        return {
            "samples": self.samples,
            "answers": self.answers,
            "errors": self.errors,
            "generated": self.generated,
            "tokens_out": None if self.tokens_out is None else self.tokens_out.to_json(),
            "tokens_reasoning": None if self.tokens_reasoning is None else self.tokens_reasoning.to_json(),
            "truncated": self.truncated,
            "truncated_share": self.truncated_share,
            "loops": self.loops,
            "loops_share": self.loops_share,
            "tokens_in_total": self.tokens_in_total,
            "tokens_out_total": self.tokens_out_total,
            "timed": self.timed,
            "model_time_s": self.model_time_s,
            "model_time_mean_s": self.model_time_mean_s,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> OutputProfile:
        """to_json read back, the same profile (a comparison kept in the store holds it: kaoshi.api.kept)."""
        return cls(
            samples=value["samples"],
            errors=value["errors"],
            answers=value["answers"],
            generated=value["generated"],
            tokens_out=CountDistribution.from_json(value["tokens_out"]),
            tokens_reasoning=CountDistribution.from_json(value["tokens_reasoning"]),
            truncated=value["truncated"],
            loops=value["loops"],
            tokens_in_total=value["tokens_in_total"],
            tokens_out_total=value["tokens_out_total"],
            timed=value["timed"],
            model_time_s=value["model_time_s"],
        )


def output_profile(samples: Iterable[SampleRecord | ScoreRow | OutputRow]) -> OutputProfile:
    """The profile of a run's samples, or of their score or output rows (kaoshi.store.columns, read with
    text_end=TAIL_CHARS): errors counted, and left out of every other number. The loop check reads only a
    cut-off answer's end."""
    items = list(samples)
    times = [s.latency_s for s in items if s.status != SampleStatus.ERROR and s.latency_s is not None]
    return counted_profile(((sample, 1) for sample in items), times)


def counted_profile(
    counted: Iterable[tuple[SampleRecord | ScoreRow | OutputRow, int]], times: Sequence[float]
) -> OutputProfile:
    """The profile of samples each standing for `n` alike in what the profile counts (a cut-off answer
    stands for itself: its end is read), with `times` the latencies of the answers that have one (the
    samples' own latencies are not read here). One pass, no object a sample."""
    # the latencies summed here, exactly rounded (44 × 0.01 s is 0.44 s), not as a tally's whole units
    return _tallied(counted, len(times), 0).profile_timed(math.fsum(times) if times else None)


# A latency in units of the least a double holds (2**-1074): whole numbers, summed and taken away exactly.
_TIME_UNIT_BITS = 1074


def _time_units(seconds: float) -> int:
    numerator, denominator = seconds.as_integer_ratio()  # the denominator a power of two
    return numerator << (_TIME_UNIT_BITS - denominator.bit_length() + 1)


@dataclass(frozen=True)
class OutputTally:
    """A run's outputs counted so that those of some of its samples can be taken away (`less`) and the
    profile of the others made (`profile`), the same as counted_profile counting them: what OutputProfile is
    made of, in whole numbers. tokens_out, tokens_reasoning: the generated answers by count; tokens_in: the
    answers' input tokens summed, over `tokens_in_counted` answers; time_units: their latencies summed
    exactly, in units of 2**-1074 (made into seconds once, rounded as math.fsum rounds their sum). A
    comparison's runs are counted on their common questions so (kaoshi.api.counting): each run's writer
    keeps its tally, and the few questions the run leaves out are counted and taken away."""

    samples: int
    errors: int
    answers: int
    generated: int
    truncated: int
    loops: int
    tokens_in: int
    tokens_in_counted: int
    tokens_out: Mapping[int, int]
    tokens_reasoning: Mapping[int, int]
    timed: int
    time_units: int

    def less(self, part: OutputTally) -> OutputTally | None:
        """The tally without `part`, samples of its own; None where `part` holds more of something (the
        latencies' sum may go below 0: only a latency written by hand is)."""
        numbers = {name: getattr(self, name) - getattr(part, name) for name in _WHOLE_NUMBERS}
        out = _histogram_less(self.tokens_out, part.tokens_out)
        reasoning = _histogram_less(self.tokens_reasoning, part.tokens_reasoning)
        counts = (value for name, value in numbers.items() if name != "time_units")
        if out is None or reasoning is None or min(counts) < 0:
            return None
        return OutputTally(**numbers, tokens_out=out, tokens_reasoning=reasoning)

    def profile(self) -> OutputProfile:
        """The profile of the samples tallied: counted_profile's of them."""
        # a whole number divided is rounded once, correctly, as math.fsum rounds the exact sum
        return self.profile_timed(self.time_units / (1 << _TIME_UNIT_BITS) if self.timed else None)

    def profile_timed(self, model_time_s: float | None) -> OutputProfile:
        """The profile of the samples tallied, their latencies summing to `model_time_s`."""
        out_total = sum(value * times for value, times in self.tokens_out.items())
        return OutputProfile(
            samples=self.samples,
            errors=self.errors,
            answers=self.answers,
            generated=self.generated,
            tokens_out=CountDistribution.of_histogram(self.tokens_out),
            tokens_reasoning=CountDistribution.of_histogram(self.tokens_reasoning),
            truncated=self.truncated,
            loops=self.loops,
            tokens_in_total=self.tokens_in if self.tokens_in_counted else None,
            tokens_out_total=out_total if any(self.tokens_out.values()) else None,
            timed=self.timed,
            model_time_s=model_time_s,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "numbers": [getattr(self, name) for name in _WHOLE_NUMBERS],
            "tokens_out": sorted(self.tokens_out.items()),
            "tokens_reasoning": sorted(self.tokens_reasoning.items()),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> OutputTally:
        """to_json read back: the same tally."""
        return cls(
            **dict(zip(_WHOLE_NUMBERS, value["numbers"], strict=True)),
            tokens_out={int(k): int(n) for k, n in value["tokens_out"]},
            tokens_reasoning={int(k): int(n) for k, n in value["tokens_reasoning"]},
        )


# OutputTally's whole numbers, in the order its JSON holds them (kept with a run's counts: another order is
# another form, and kaoshi.api.kept's _FORMAT then changes).
_WHOLE_NUMBERS = (
    "samples", "errors", "answers", "generated", "truncated", "loops", "tokens_in", "tokens_in_counted",
    "timed", "time_units",
)  # fmt: skip


def _histogram_less(mine: Mapping[int, int], theirs: Mapping[int, int]) -> dict[int, int] | None:
    left = Counter(mine)
    for value, times in theirs.items():
        left[value] -= times
        if left[value] < 0:
            return None
    return {value: times for value, times in left.items() if times}


def counted_tally(
    counted: Iterable[tuple[SampleRecord | ScoreRow | OutputRow, int]], times: Sequence[float]
) -> OutputTally | None:
    """The tally of what counted_profile counts (the same arguments); None where a latency is not a finite
    number (its sum cannot be taken apart)."""
    if not all(map(math.isfinite, times)):
        return None
    return _tallied(counted, len(times), sum(map(_time_units, times)))


def _tallied(
    counted: Iterable[tuple[SampleRecord | ScoreRow | OutputRow, int]], timed: int, time_units: int
) -> OutputTally:
    """counted_profile's counts of `counted`, with the latencies' number and sum as given."""
    samples_n = errors = answers = generated = truncated = loops = tokens_in = tokens_in_counted = 0
    out: Counter[int] = Counter()
    reasoning: Counter[int] = Counter()
    for sample, n in counted:
        samples_n += n
        if sample.status == SampleStatus.ERROR:
            errors += n
            continue
        answers += n
        if sample.tokens_in is not None:
            tokens_in += sample.tokens_in * n
            tokens_in_counted += n
        if sample.extracted_by in NOT_GENERATED:
            continue
        generated += n
        if sample.tokens_out is not None:
            out[sample.tokens_out] += n
        if sample.tokens_reasoning is not None:
            reasoning[sample.tokens_reasoning] += n
        if sample.truncated:
            truncated += n
            if not isinstance(sample, SampleRecord):
                end = output_end(sample.response_end, sample.reasoning_end)
            else:
                end = output_end(sample.response, sample.reasoning)
            loops += n * repeats_to_the_end(end)
    return OutputTally(
        samples_n, errors, answers, generated, truncated, loops, tokens_in, tokens_in_counted, dict(out),
        dict(reasoning), timed, time_units,
    )  # fmt: skip
