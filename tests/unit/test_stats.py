"""Wilson intervals, weighted F1 and the paired bootstrap against hand-computed and analytic answers."""

from __future__ import annotations

import math

import pytest

from kaoshi.analysis.stats import paired_bootstrap, wilson_interval
from kaoshi.results.metrics import macro_accuracy, pr_f1, weighted_f1


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        (3, 6, (0.1876, 0.8124)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (81, 100, (0.7222, 0.8749)),  # by hand: centre 0.79853, half-width 0.07632
    ],
)
def test_wilson_interval_matches_textbook_values(
    successes: int, n: int, expected: tuple[float, float]
) -> None:
    low, high = wilson_interval(successes, n)
    assert low == pytest.approx(expected[0], abs=1e-4)
    assert high == pytest.approx(expected[1], abs=1e-4)


def test_wilson_interval_edge_cases() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(7, 6)


def test_weighted_f1_by_hand() -> None:
    # A: support 2, tp 1, predicted once -> F1 2/3; B: support 1, tp 1, predicted twice -> 2/3;
    # C: support 1, never predicted (unparsed) -> 0. Weighted: (2 * 2/3 + 2/3 + 0) / 4 = 0.5
    pairs = [("A", "A"), ("A", "B"), ("B", "B"), ("C", "")]
    assert weighted_f1(pairs) == pytest.approx(0.5)
    assert weighted_f1([("ABD", "ABD"), ("正确", "正确")]) == 1.0
    assert weighted_f1([]) is None


def test_qualbench_f1_by_hand() -> None:
    # FORMATS.md's example. Weighted precision: A 2 x 1/1, B 1 x 1/2, C 1 x 0 (never predicted), AB 1 x 1
    # -> 3.5 / 5 = 0.7; weighted recall = accuracy = 3/5; F1 = 2 * 0.7 * 0.6 / 1.3 = 0.64615.
    pairs = list(zip(["A", "A", "B", "C", "AB"], ["A", "B", "B", "", "AB"], strict=True))
    assert pr_f1(pairs) == pytest.approx(0.646154, abs=1e-6)
    assert weighted_f1(pairs) == pytest.approx(0.6)  # the support-weighted mean of per-label F1s differs
    assert pr_f1([("正确", "正确"), ("ABD", "ABD")]) == 1.0
    assert pr_f1([("A", "B")]) == 0.0
    assert pr_f1([]) is None


def test_qualbench_f1_matches_scikit_learn_weighted_precision_and_recall() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    import random

    rng = random.Random(3)
    labels = ["A", "B", "C", "D", "AB", "ACD", "正确", "错误", ""]
    for _ in range(50):
        gold = [rng.choice(labels[:-1]) for _ in range(rng.randint(1, 60))]
        predicted = [g if rng.random() < 0.5 else rng.choice(labels) for g in gold]
        precision = metrics.precision_score(gold, predicted, average="weighted", zero_division=0)
        recall = metrics.recall_score(gold, predicted, average="weighted", zero_division=0)
        expected = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        assert pr_f1(zip(gold, predicted, strict=True)) == pytest.approx(expected, abs=1e-12)


def test_macro_accuracy_skips_ungraded_groups() -> None:
    class Group:
        def __init__(self, accuracy: float | None) -> None:
            self.accuracy = accuracy

    assert macro_accuracy({"a": Group(1.0), "b": Group(0.5), "c": Group(None)}) == 0.75
    assert macro_accuracy({"c": Group(None)}) is None


def test_bootstrap_of_identical_runs_finds_no_difference() -> None:
    scores = [1.0, 0.0, 1.0, 1.0, 0.0]
    result = paired_bootstrap(scores, scores, resamples=2000)
    assert (result.difference, result.low, result.high, result.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_bootstrap_of_a_total_win_is_certain() -> None:
    result = paired_bootstrap([0.0] * 50, [1.0] * 50, resamples=2000)
    assert (result.difference, result.low, result.high) == (1.0, 1.0, 1.0)
    assert result.p_value == pytest.approx(2 / 2001)


@pytest.mark.parametrize(("b_wins", "a_wins"), [(150, 50), (55, 45)])
def test_bootstrap_matches_the_analytic_normal_answer(b_wins: int, a_wins: int) -> None:
    """1000 paired questions; the mean difference has sd sqrt((E[d^2] - E[d]^2) / n)."""
    n = 1000
    ties = n - b_wins - a_wins
    a = [0.0] * b_wins + [1.0] * a_wins + [1.0] * ties
    b = [1.0] * b_wins + [0.0] * a_wins + [1.0] * ties
    diff = (b_wins - a_wins) / n
    sd = math.sqrt(((b_wins + a_wins) / n - diff**2) / n)
    result = paired_bootstrap(a, b, resamples=20_000, seed=1)
    assert result.difference == pytest.approx(diff)
    assert result.low == pytest.approx(diff - 1.96 * sd, abs=0.003)
    assert result.high == pytest.approx(diff + 1.96 * sd, abs=0.003)
    expected_p = math.erfc(abs(diff) / sd / math.sqrt(2))  # two-sided normal p-value
    assert result.p_value == pytest.approx(expected_p, abs=0.03)


def test_bootstrap_handles_partial_credit_and_refuses_unpaired_input() -> None:
    result = paired_bootstrap([0.5, 1.0, 0.0, 0.25], [1.0, 1.0, 0.5, 0.25], resamples=1000)
    assert result.difference == pytest.approx(0.25)
    assert 0.0 <= result.low <= 0.25 <= result.high <= 0.5
    with pytest.raises(ValueError, match="same questions"):
        paired_bootstrap([1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="no paired"):
        paired_bootstrap([], [])
