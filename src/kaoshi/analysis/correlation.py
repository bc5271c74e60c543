"""Correlation coefficients with Fisher-z confidence intervals, and Kendall's tau-b.

Computed here rather than by scipy.stats, though tests/unit/test_agreement.py checks them against it: scipy's
pearsonr, spearmanr and kendalltau agree to about 1e-15, but that last bit changes printed reports. Small
samples of integer scores often have a coefficient exactly half-way between two printed values (tau-b =
-3/16 prints -0.188 here and -0.187 from scipy; rho = -7/16 likewise), or exactly 0 (-0.000 against
0.000). scipy also has no interval for Spearman's rho (variance 1.06 / (n - 3)), and it is an optional
dependency (the subjective extra)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kaoshi.analysis.stats import Z_95
from kaoshi.errors import InputError


@dataclass(frozen=True)
class Correlation:
    value: float | None  # None when undefined (fewer than 3 points, or a constant series)
    low: float | None = None
    high: float | None = None


def _check(x: Sequence[float], y: Sequence[float]) -> None:
    if len(x) != len(y):
        raise InputError(f"paired series differ in length: {len(x)} vs {len(y)}")


def _pearson_value(x: Sequence[float], y: Sequence[float]) -> float | None:
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _fisher_interval(r: float, n: int, variance_factor: float) -> tuple[float, float] | tuple[None, None]:
    if n <= 3 or abs(r) >= 1:
        return (None, None) if n <= 3 else (r, r)
    z = math.atanh(r)
    half = Z_95 * math.sqrt(variance_factor / (n - 3))
    return math.tanh(z - half), math.tanh(z + half)


def pearson(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson's r with the Fisher-z 95% interval."""
    _check(x, y)
    r = _pearson_value(x, y)
    if r is None:
        return Correlation(None)
    low, high = _fisher_interval(r, len(x), 1.0)
    return Correlation(r, low, high)


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of their positions."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            ranks[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Spearman's rho (Pearson on average ranks) with the Fisher-z interval, variance 1.06 / (n - 3)
    (Fieller, Hartley and Pearson, 1957)."""
    _check(x, y)
    rho = _pearson_value(average_ranks(x), average_ranks(y))
    if rho is None:
        return Correlation(None)
    low, high = _fisher_interval(rho, len(x), 1.06)
    return Correlation(rho, low, high)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b, which corrects for ties (human scores are full of them). O(n^2): graders are
    compared on hundreds of answers, not millions."""
    _check(x, y)
    concordant = discordant = ties_x = ties_y = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                ties_x += 1
            elif dy == 0:
                ties_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else None
