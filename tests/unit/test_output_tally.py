"""A run's output tally (kaoshi.analysis.outputs.OutputTally): with the samples of some of its questions taken
away, it makes the profile counted_profile makes of the others, number for number (the token counts'
percentiles, and the latencies' sum rounded as math.fsum rounds it), whatever the samples and latencies;
it reads back from JSON the same, and refuses to take away what it does not hold."""

from __future__ import annotations

import math
import random
import sys
from collections import Counter

import pytest

from kaoshi.analysis.outputs import CountDistribution, OutputTally, counted_profile, counted_tally
from kaoshi.store.columns import OutputRow
from kaoshi.store.records import SampleStatus

LOOP = "答案是A。" * 40  # a cut-off answer that loops to its budget


def _row(rng: random.Random) -> OutputRow:
    status = rng.choice([SampleStatus.OK, SampleStatus.OK, SampleStatus.UNPARSED, SampleStatus.ERROR])
    extracted_by = rng.choice(["rule", "rule", "loglik", "vote", "llm"])
    truncated = int(rng.random() < 0.2)
    counts = [rng.choice([None, 0, 1, 7, 7, 50, 8192, rng.randrange(1, 3000)]) for _ in range(3)]
    ends = (
        (rng.choice([LOOP, "解析：根据规定，选A。", ""]), rng.choice([None, LOOP, "想一想"]))
        if truncated
        else (None, None)
    )
    return OutputRow(status.value, extracted_by, *counts, None, truncated, *ends)


def _latency(rng: random.Random) -> float:
    """Latencies whose sums round: tenths, tiny and huge ones, subnormals, exact halves."""
    return rng.choice(
        [
            0.1,
            0.01,
            1e-9,
            rng.random(),
            rng.lognormvariate(0, 2),
            1e15 + rng.random(),
            sys.float_info.min * rng.random(),
            2.0**-30,
            0.5,
            3.0,
        ]
    )


def _samples(rng: random.Random, n: int) -> list[tuple[OutputRow, float | None]]:
    samples = []
    for _ in range(n):
        row = _row(rng)
        answered = row.status != SampleStatus.ERROR.value
        samples.append((row, _latency(rng) if answered and rng.random() < 0.9 else None))
    return samples


def _counted(
    samples: list[tuple[OutputRow, float | None]],
) -> tuple[list[tuple[OutputRow, int]], list[float]]:
    """What output_counts gives of them: rows alike counted once (cut-off answers each on their own)."""
    alike = Counter(row for row, _ in samples if not row.truncated)
    counted = [*alike.items(), *((row, 1) for row, _ in samples if row.truncated)]
    return counted, [latency for _, latency in samples if latency is not None]


@pytest.mark.parametrize("seed", range(40))
def test_a_tally_less_some_samples_is_the_profile_of_the_others(seed: int) -> None:
    rng = random.Random(seed)
    samples = _samples(rng, rng.choice([1, 5, 60, 400]))
    taken = set(rng.sample(range(len(samples)), rng.randrange(0, len(samples) + 1)))
    part = [sample for i, sample in enumerate(samples) if i in taken]
    rest = [sample for i, sample in enumerate(samples) if i not in taken]
    whole, less = counted_tally(*_counted(samples)), counted_tally(*_counted(part))
    assert whole is not None and less is not None
    narrowed = whole.less(less)
    assert narrowed is not None
    assert narrowed.profile() == counted_profile(*_counted(rest))
    assert narrowed.profile().to_json() == counted_profile(*_counted(rest)).to_json()
    assert OutputTally.from_json(whole.to_json()) == whole
    assert whole.profile() == counted_profile(*_counted(samples))


def test_the_latencies_sum_as_fsum_sums_them_where_a_running_sum_would_not() -> None:
    times = [0.1] * 10 + [1e16, 1.0, -1e16]
    assert sum(times) != math.fsum(times)
    row = OutputRow(SampleStatus.OK.value, "rule", 10, 20, None, None, 0)
    tally = counted_tally([(row, len(times))], times)
    assert tally is not None and tally.profile().model_time_s == math.fsum(times)
    less = counted_tally([(row, 2)], [1e16, -1e16])
    assert less is not None
    narrowed = tally.less(less)
    assert narrowed is not None and narrowed.profile().model_time_s == math.fsum([0.1] * 10 + [1.0])


def test_a_tally_refuses_to_take_away_what_it_does_not_hold() -> None:
    row = OutputRow(SampleStatus.OK.value, "rule", 10, 20, None, 1.0, 0)
    other = OutputRow(SampleStatus.OK.value, "rule", 10, 21, None, 1.0, 0)
    tally = counted_tally([(row, 3)], [1.0] * 3)
    more = counted_tally([(row, 4)], [1.0] * 4)
    elsewhere = counted_tally([(other, 1)], [1.0])
    assert tally is not None and more is not None and elsewhere is not None
    assert tally.less(more) is None
    assert tally.less(elsewhere) is None  # an answer of 21 tokens it never had


def test_a_latency_that_is_no_number_makes_no_tally() -> None:
    row = OutputRow(SampleStatus.OK.value, "rule", 10, 20, None, None, 0)
    assert counted_tally([(row, 2)], [1.0, math.inf]) is None
    assert counted_tally([(row, 2)], [1.0, math.nan]) is None


@pytest.mark.parametrize("seed", range(30))
def test_a_distribution_of_a_histogram_is_that_of_its_counts(seed: int) -> None:
    rng = random.Random(seed)
    counts = [rng.choice([0, 1, 2, 2, 9, 8192, rng.randrange(0, 500)]) for _ in range(rng.randrange(1, 300))]
    assert CountDistribution.of_histogram(Counter(counts)) == CountDistribution.of(counts)
    assert CountDistribution.of_histogram({}) is None and CountDistribution.of_histogram({5: 0}) is None
