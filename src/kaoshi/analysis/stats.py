"""Uncertainty: Wilson intervals for accuracies, the paired bootstrap for differences between two runs."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kaoshi.errors import InputError

Z_95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a proportion; (0, 1) when there are no trials.

    Unlike the normal approximation it stays inside [0, 1] and is sensible at 0/n and n/n.
    `successes` may be fractional (points under partial credit).
    """
    if n <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= n:
        raise InputError(f"successes must lie in [0, {n}], got {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # Rounding can leave the bound a hair on the wrong side of p at 0/n and n/n.
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


@dataclass(frozen=True)
class BootstrapResult:
    """Mean of b - a over paired questions, its percentile interval and a two-sided p-value."""

    n: int
    difference: float
    low: float
    high: float
    p_value: float
    resamples: int

    def to_json(self) -> dict[str, float | int]:
        return {
            "n": self.n,
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
            "resamples": self.resamples,
        }


@dataclass(frozen=True)
class Differences:
    """b - a over paired questions as the paired bootstrap reads them: how many, each distinct value
    (ascending) and how often it comes, and their mean. A few numbers however many questions: what a
    comparison kept in the store holds of its runs' outcomes (kaoshi.api.kept)."""

    n: int
    values: tuple[float, ...]
    counts: tuple[int, ...]
    mean: float

    def to_json(self) -> list[Any]:
        return [self.n, list(self.values), list(self.counts), self.mean]

    @classmethod
    def from_json(cls, value: Sequence[Any]) -> Differences:
        n, values, counts, mean = value
        return cls(int(n), tuple(map(float, values)), tuple(map(int, counts)), float(mean))


def paired_differences(a: Sequence[float], b: Sequence[float]) -> Differences:
    """b - a question by question, counted by value (paired_bootstrap's input)."""
    import numpy as np  # imported here so that `import kaoshi` stays light

    if len(a) != len(b):
        raise InputError(f"paired runs need the same questions: {len(a)} vs {len(b)} scores")
    if len(a) == 0:
        raise InputError("no paired questions to compare")
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    values, counts = np.unique(diffs, return_counts=True)
    return Differences(len(a), tuple(values.tolist()), tuple(counts.tolist()), float(diffs.mean()))


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of mean(b - a): questions are resampled with replacement, both runs together.

    The per-question differences take few distinct values (-1, 0, 1, or a few partial credits), so a
    resample's mean depends only on how many times each value is drawn: one multinomial draw over the
    distinct values is exactly a resample of n questions, at O(values) instead of O(n) per resample.
    The p-value tests "no difference" by the fraction of resampled means on the far side of zero
    (two-sided, with the +1 correction so it is never reported as exactly 0).
    """
    return bootstrap_differences(paired_differences(a, b), resamples, seed, confidence)


def bootstrap_differences(
    differences: Differences, resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> BootstrapResult:
    """paired_bootstrap from the differences counted by value: the same draws, the same numbers."""
    import numpy as np  # imported here so that `import kaoshi` stays light

    n = differences.n
    values = np.asarray(differences.values, dtype=float)
    counts = np.asarray(differences.counts, dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts / n, size=resamples)
    means = draws @ values / n
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    if np.all(values == 0):
        p_value = 1.0
    else:
        below = int(np.count_nonzero(means <= 0))
        above = int(np.count_nonzero(means >= 0))
        p_value = min(1.0, 2 * (min(below, above) + 1) / (resamples + 1))
    return BootstrapResult(n, differences.mean, float(low), float(high), p_value, resamples)


def exact_sum(weighted: Iterable[tuple[float, int]]) -> float:
    """The sum of each value times its weight, exact and rounded once (a run's points come in a few
    distinct values, so those are added as fractions, each once)."""
    by_value: dict[float, int] = {}
    for value, weight in weighted:
        if value:
            by_value[value] = by_value.get(value, 0) + weight
    if all(float(value).is_integer() for value in by_value):  # whole points: integers add up exactly
        return float(sum(int(value) * n for value, n in by_value.items()))
    return float(sum((Fraction(value) * n for value, n in by_value.items()), Fraction(0)))
