"""The full exam's accuracy estimated from a stratified random sample of it (kaoshi.data.subsets): the
stratified estimator with the finite-population correction (Cochran, Sampling Techniques, ch. 5).

Each stratum h of the exam holds N_h questions an accuracy counts; the sample checked n_h of them and found
c_h right. The estimate weighs each stratum's accuracy by its share of the exam, W_h = N_h / N:

    p = sum_h W_h p_h,    var(p) = sum_h W_h^2 (1 - n_h / N_h) s_h^2 / n_h,
    s_h^2 = n_h p_h (1 - p_h) / (n_h - 1)

and the interval is p +- z * sqrt(var(p)), cut to [0, 1]. A stratum checked in full adds no variance (its
accuracy is known); one checked once borrows the pooled variance of the whole sample. Answers that failed
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
    right_in_all = sum(found[name][0] for name in counted)
    checked_in_all = sum(found[name][1] for name in counted)
    overall = right_in_all / checked_in_all
    pooled = overall * (1 - overall) * checked_in_all / max(checked_in_all - 1, 1)
    accuracy = variance = 0.0
    for name, size in counted.items():
        right, checked = found[name]
        weight = size / total
        share = right / checked
        accuracy += weight * share
        spread = share * (1 - share) * checked / (checked - 1) if checked > 1 else pooled
        variance += weight**2 * (1 - checked / size) * spread / checked
    error = math.sqrt(variance)
    margin = _Z[confidence] * error
    return Estimate(
        accuracy,
        error,
        max(0.0, accuracy - margin),
        min(1.0, accuracy + margin),
        confidence,
        checked_in_all,
        total,
    )
