"""The full exam's accuracy estimated from a stratified random sample of it (kaoshi.data.subsets): the
stratified estimator with the finite-population correction (Cochran, Sampling Techniques, ch. 5).

Each stratum h of the exam holds N_h questions an accuracy counts; the sample checked n_h of them and found
c_h right. The estimate weighs each stratum's accuracy by its share of the exam, W_h = N_h / N:

    p = sum_h W_h p_h,    var(p) = sum_h W_h^2 (1 - n_h / N_h) s_h^2 / n_h,
    s_h^2 = n_h q_h (1 - q_h) / max(n_h - 1, 1),    q_h = (c_h + 1) / (n_h + 2)

and the interval is Wilson's score interval around p for the effective sample size n = q (1 - q) / var(p),
q = sum_h W_h q_h (Kish's design effect; Korn and Graubard's approach, with Wilson's interval). A stratum's
spread is taken from its share with one right and one wrong answer added (q_h, as Agresti and Coull's
interval does), so that strata of a few answers all right or all wrong still have one; a stratum checked in
full adds no variance (its accuracy is known). Answers that failed
with an error are not checked, so a stratum's sample is its checked answers (errors taken to be unrelated
to the answer, as `kaoshi report` takes them when it leaves them out of the accuracy).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from kaoshi.errors import InputError

# Two-sided normal quantiles for the confidence levels reports use.
_Z = {0.90: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}


@dataclass(frozen=True)
class Estimate:
    """The full exam's accuracy estimated from a sample: the estimate, its standard error and interval,
    and what it rests on (answers checked in the sample, questions counted in the exam)."""

    accuracy: float
    standard_error: float
    low: float
    high: float
    confidence: float
    checked: int
    population: int

    def to_json(self) -> dict[str, float | int]:
        return {
            "accuracy": self.accuracy,
            "standard_error": self.standard_error,
            "low": self.low,
            "high": self.high,
            "confidence": self.confidence,
            "checked": self.checked,
            "population": self.population,
        }


def estimate_accuracy(
    population: Mapping[str, int], found: Mapping[str, tuple[int, int]], confidence: float = 0.95
) -> Estimate:
    """The stratified estimate of the exam's accuracy. `population`: stratum -> questions the accuracy
    counts in the exam; `found`: stratum -> (right, checked) in the sample. InputError where a stratum of
    the exam has no checked answer in the sample (nothing to estimate it from)."""
    if confidence not in _Z:
        raise InputError(f"confidence {confidence}: choose from {', '.join(map(str, sorted(_Z)))}")
    counted = {name: size for name, size in population.items() if size > 0}
    total = sum(counted.values())
    if total == 0:
        raise InputError("the exam has no question an accuracy counts")
    unseen = sorted(name for name in counted if found.get(name, (0, 0))[1] == 0)
    if unseen:
        shown = ", ".join(unseen[:5]) + (" ..." if len(unseen) > 5 else "")
        raise InputError(f"no answer checked in {len(unseen)} part(s) of the exam sampled: {shown}")
    for name in counted:
        right, checked = found[name]
        if not 0 <= right <= checked <= counted[name]:
            raise InputError(f"{name}: {right} right of {checked} checked of {counted[name]} questions")
    accuracy = adjusted_accuracy = variance = 0.0
    for name, size in counted.items():
        right, checked = found[name]
        weight = size / total
        accuracy += weight * right / checked
        # the stratum's spread from its share with one right and one wrong answer added: a stratum whose
        # few answers were all right is not taken to have no spread (an interval of no width, which
        # covered a 96% model's accuracy in 55% of draws), and one answer checked has a spread too
        adjusted = (right + 1) / (checked + 2)
        adjusted_accuracy += weight * adjusted
        spread = adjusted * (1 - adjusted) * checked / max(checked - 1, 1)
        variance += weight**2 * (1 - checked / size) * spread / checked
    low, high = _wilson(accuracy, adjusted_accuracy, variance, _Z[confidence])
    return Estimate(
        accuracy,
        math.sqrt(variance),
        low,
        high,
        confidence,
        sum(found[name][1] for name in counted),
        total,
    )


def _wilson(accuracy: float, adjusted: float, variance: float, z: float) -> tuple[float, float]:
    """Wilson's score interval around `accuracy` for the sample size that gives the design's `variance`
    (its effective size, Kish's: a binomial share `adjusted` over it has that variance). Near 0% and 100%
    it stays inside [0, 1] and off its edge, where `accuracy +- z * error` missed a 96% model's accuracy
    in one draw of nine. No variance (every stratum checked in full): the accuracy itself."""
    if variance <= 0:
        return accuracy, accuracy
    n = adjusted * (1 - adjusted) / variance
    centre = (accuracy + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def worst_margin(sample: int, population: int, confidence: float = 0.95) -> float:
    """The half-width of the interval a simple random sample of `sample` questions out of `population`
    gives at worst (an accuracy of 50%), with the finite-population correction: what `--sample N` buys
    before any answer is known (a stratified sample does as well or better)."""
    if sample <= 0 or population <= 0:
        raise InputError("a sample and its exam need at least one question each")
    if sample >= population:
        return 0.0
    correction = (population - sample) / max(population - 1, 1)
    return _Z[confidence] * math.sqrt(0.25 / sample * correction)
