"""Statistics beyond micro accuracy: macro means over groups, category means of subject accuracies, and
F1s over answer strings. A benchmark whose protocol reports one declares it among its metrics
(kaoshi.results.metric)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Protocol

OBJECTIVE, SUBJECTIVE = "objective", "subjective"  # the parts of a mixed exam
UNKNOWN_GROUP = "(none)"  # the group of a sample without a domain, subject or category
# The order C-Eval prints its four categories in; CMMLU and M3KE name theirs the same, so categories are
# shown in this order, any other after them alphabetically.
CATEGORY_ORDER = ("STEM", "Social Science", "Humanities", "Other")


class HasAccuracy(Protocol):
    @property
    def accuracy(self) -> float | None: ...


def macro_accuracy(groups: Mapping[str, HasAccuracy]) -> float | None:
    """Mean of the groups' accuracies, each group counting once whatever its size; None if none graded."""
    values = [g.accuracy for g in groups.values() if g.accuracy is not None]
    return sum(values) / len(values) if values else None


def category_means(
    subjects: Mapping[str, HasAccuracy], category_of: Mapping[str, str], overall: str
) -> dict[str, float]:
    """Each category the mean of its subjects' accuracies, and `overall` the mean over all subjects (not
    over the category means, not over questions): C-Eval's convention, which CMMLU, FinEval and M3KE
    share. Categories in the order their first subject comes, `overall` last."""
    by_category: dict[str, list[float]] = {}
    every: list[float] = []
    for subject, tally in subjects.items():
        if tally.accuracy is None:
            continue
        every.append(tally.accuracy)
        category = category_of.get(subject)
        if category:
            by_category.setdefault(category, []).append(tally.accuracy)
    result = {name: sum(v) / len(v) for name, v in by_category.items()}
    if every:
        result[overall] = sum(every) / len(every)
    return result


# (gold, predicted) pairs, one a graded answer, or each pair with the number of answers that gave it
Pairs = Iterable[tuple[str, str]] | Mapping[tuple[str, str], int]


def _label_counts(pairs: Pairs) -> tuple[Counter[str], Counter[str], Counter[str]]:
    """Per answer string: true positives, gold support and times predicted."""
    true_positive: Counter[str] = Counter()
    gold_count: Counter[str] = Counter()
    predicted_count: Counter[str] = Counter()
    counted = pairs.items() if isinstance(pairs, Mapping) else ((pair, 1) for pair in pairs)
    for (gold, predicted), n in counted:
        gold_count[gold] += n
        predicted_count[predicted] += n
        if gold == predicted:
            true_positive[gold] += n
    return true_positive, gold_count, predicted_count


def weighted_f1(pairs: Pairs) -> float | None:
    """F1 per gold answer string ("A", "ABD", "正确"), averaged weighted by how often each is the gold.

    `pairs` are (gold, predicted), or each pair with its count; an unparsed prediction is "" and only
    ever counts against recall.
    This is scikit-learn's `f1_score(average="weighted")` over answer strings, as QualBench reports it.
    """
    true_positive, gold_count, predicted_count = _label_counts(pairs)
    total = sum(gold_count.values())
    if not total:
        return None
    weighted = 0.0
    for label, support in gold_count.items():
        tp = true_positive[label]
        denominator = support + predicted_count[label]  # 2tp + fp + fn
        weighted += support * (2 * tp / denominator if denominator else 0.0)
    return weighted / total


def pr_f1(pairs: Pairs) -> float | None:
    """F1 as the QualBench paper computes it: 2PR/(P+R) of the weighted precision P and weighted recall R
    over answer strings as labels (each gold label weighted by its support; a label never predicted has
    precision 0). R equals accuracy. This is not `weighted_f1`, the support-weighted mean of per-label
    F1s: on gold A,A,B,C,AB and predictions A,B,B,"",AB it is 0.6462 where `weighted_f1` gives 0.6."""
    true_positive, gold_count, predicted_count = _label_counts(pairs)
    total = sum(gold_count.values())
    if not total:
        return None
    precision = (
        sum(
            support * (true_positive[label] / predicted_count[label] if predicted_count[label] else 0.0)
            for label, support in gold_count.items()
        )
        / total
    )
    recall = sum(true_positive.values()) / total
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
