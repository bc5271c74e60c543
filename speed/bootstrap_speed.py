"""The paired bootstrap behind `kaoshi report A B`: kaoshi's multinomial draw over the distinct
per-question differences against scipy.stats.bootstrap (paired, percentile) and plain numpy index
resampling, on QualBench-sized runs (17,000 paired questions, 10,000 resamples).

All three estimate the same distribution; the script prints each one's time and 95% interval.
Run: .venv/bin/python speed/bootstrap_speed.py   (needs scipy: the `subjective` extra)
"""

from __future__ import annotations

import os
import time

import numpy as np
from scipy import stats

from kaoshi.analysis.stats import paired_bootstrap

N = int(os.environ.get("KAOSHI_BENCH_N", "17000"))
RESAMPLES = 10_000


def two_runs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Two correlated runs: B right where A is (mostly), plus some questions of its own (~62% vs ~60%)."""
    rng = np.random.default_rng(1)
    a = (rng.random(n) < 0.60).astype(float)
    b = np.where(rng.random(n) < 0.85, a, (rng.random(n) < 0.70).astype(float))
    return a, b


def numpy_indices(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """What a one-off script does: draw n indices per resample (in chunks to bound memory)."""
    rng = np.random.default_rng(0)
    diffs = b - a
    means = np.empty(RESAMPLES)
    chunk = 500
    for start in range(0, RESAMPLES, chunk):
        idx = rng.integers(0, len(diffs), size=(chunk, len(diffs)))
        means[start : start + chunk] = diffs[idx].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(low), float(high)


def scipy_bootstrap(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    result = stats.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=RESAMPLES,
        batch=500,
        method="percentile",
        random_state=np.random.default_rng(0),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def timed(label: str, fn: object, a: np.ndarray, b: np.ndarray) -> float:
    start = time.perf_counter()
    low, high = fn(a, b)  # type: ignore[operator]
    seconds = time.perf_counter() - start
    print(f"{label:<34} {seconds:8.3f} s   95% CI [{100 * low:+.2f}, {100 * high:+.2f}] points")
    return seconds


def main() -> None:
    a, b = two_runs(N)
    print(
        f"{N} paired questions, {RESAMPLES} resamples; observed difference {100 * (b - a).mean():+.2f} points"
    )

    def kaoshi(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        result = paired_bootstrap(x.tolist(), y.tolist(), resamples=RESAMPLES)
        return result.low, result.high

    ours = timed("kaoshi (multinomial over values)", kaoshi, a, b)
    peer = timed("scipy.stats.bootstrap (paired)", scipy_bootstrap, a, b)
    plain = timed("numpy index resampling", numpy_indices, a, b)
    print(f"speed-up: {peer / ours:.0f}x vs scipy, {plain / ours:.0f}x vs numpy indices")


if __name__ == "__main__":
    main()
