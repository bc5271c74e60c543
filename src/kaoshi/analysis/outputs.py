"""What a run's outputs look like: how many tokens its answers took (and their reasoning), how many were cut
off at the token budget and how many of those loop to it, and the tokens and model time the run cost."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.store.columns import ScoreRow
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
    for period in range(1, MAX_PERIOD + 1):
        span = max(MIN_REPEATS * period, MIN_LOOP_CHARS)
        if span > len(tail):  # the span only grows with the period: no longer period can fit either
            return False
        end = tail[-span:]
        # every character equals the one a period before it: the end is a unit of `period` repeated
        if end[period:] == end[:-period]:
            return True
    return False


def output_end(response: str | None, reasoning: str | None) -> str:
    """The last TAIL_CHARS characters the model wrote: its reasoning, then its answer text (a reply cut off
    while reasoning has an empty answer, so its reasoning holds the end)."""
    return ((reasoning or "")[-TAIL_CHARS:] + (response or ""))[-TAIL_CHARS:]


@dataclass(frozen=True)
class OutputFacts:
    """What the profile reads of one sample (kaoshi.view reads the same from its columns)."""

    error: bool  # no usable output: left out of every count but `errors`
    generated: bool  # written by the model (not ranked by log-likelihood, nor combined by a vote)
    tokens_in: int | None
    tokens_out: int | None
    tokens_reasoning: int | None
    latency_s: float | None
    truncated: bool
    loops: bool  # cut off at the budget and repeating itself to it


def output_facts(sample: SampleRecord | ScoreRow) -> OutputFacts:
    """The facts of a stored sample, or of its row (kaoshi.store.columns, read with text_end=TAIL_CHARS);
    the loop check reads only a cut-off answer's end."""
    if isinstance(sample, ScoreRow):
        response, reasoning = sample.response_end, sample.reasoning_end
    else:
        response, reasoning = sample.response, sample.reasoning
    return OutputFacts(
        error=sample.status == SampleStatus.ERROR,
        generated=sample.extracted_by not in NOT_GENERATED,
        tokens_in=sample.tokens_in,
        tokens_out=sample.tokens_out,
        tokens_reasoning=sample.tokens_reasoning,
        latency_s=sample.latency_s,
        truncated=sample.truncated,
        loops=sample.truncated and repeats_to_the_end(output_end(response, reasoning)),
    )


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
        """The distribution of `counts`; None when there are none."""
        if not counts:
            return None
        import numpy as np  # imported here so that `import kaoshi` stays light

        # inverted_cdf (Hyndman and Fan's definition 1): the smallest count that at least q of the answers
        # stay within. It is always a count some answer had: "p99 8,192" then says that answers reach the
        # budget, where linear interpolation (numpy's default) would report 8,191.4, a length no answer has.
        p50, p90, p99 = np.percentile(np.asarray(counts, dtype=np.int64), [50, 90, 99], method="inverted_cdf")
        return cls(len(counts), sum(counts) / len(counts), int(p50), int(p90), int(p99), max(counts))

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p99": self.p99,
            "max": self.max,
        }


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


def _total(counts: Sequence[int]) -> int | None:
    return sum(counts) if counts else None


def profile_of(facts: Iterable[OutputFacts]) -> OutputProfile:
    """The profile of samples' facts (output_facts, or the viewer's reading of the same columns)."""
    every = list(facts)
    answers = [f for f in every if not f.error]
    generated = [f for f in answers if f.generated]
    out = [f.tokens_out for f in generated if f.tokens_out is not None]
    times = [f.latency_s for f in answers if f.latency_s is not None]
    return OutputProfile(
        samples=len(every),
        errors=len(every) - len(answers),
        answers=len(answers),
        generated=len(generated),
        tokens_out=CountDistribution.of(out),
        tokens_reasoning=CountDistribution.of(
            [f.tokens_reasoning for f in generated if f.tokens_reasoning is not None]
        ),
        truncated=sum(f.truncated for f in generated),
        loops=sum(f.loops for f in generated),
        tokens_in_total=_total([f.tokens_in for f in answers if f.tokens_in is not None]),
        tokens_out_total=_total(out),
        timed=len(times),
        model_time_s=math.fsum(times) if times else None,  # exactly rounded: 44 × 0.01 s is 0.44 s
    )


def output_profile(samples: Iterable[SampleRecord | ScoreRow]) -> OutputProfile:
    """The profile of a run's samples: errors counted, and left out of every other number."""
    return profile_of(output_facts(sample) for sample in samples)
