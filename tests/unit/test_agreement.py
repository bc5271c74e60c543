"""Agreement statistics on hand-computed fixtures, cross-checked with scipy (the agreement command end to
end is in tests/integration/test_judge.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from kaoshi.analysis.agreement import agreement, human_means, read_human_scores, sd_histogram
from kaoshi.analysis.correlation import average_ranks, kendall_tau_b, pearson, spearman
from kaoshi.data.errors import DataError

HUMAN = {  # question -> scorer -> score; means 9, 5, 3, 0 and SDs (population) 1, 0, 1, 0
    "q1": {"h1": 8, "h2": 10},
    "q2": {"h1": 5, "h2": 5},
    "q3": {"h1": 2, "h2": 4},
    "q4": {"h1": 0, "h2": 0},
}


def test_pearson_spearman_kendall_by_hand() -> None:
    grader = {"q1": 10.0, "q2": 6.0, "q3": 2.0, "q4": 1.0}
    row = agreement("g", grader, human_means(HUMAN))
    # dx = 4.75 .75 -1.25 -4.25, dy = 5.25 1.25 -2.75 -3.75: r = 45.25 / sqrt(42.75 * 50.75)
    assert row.pearson.value == pytest.approx(45.25 / math.sqrt(42.75 * 50.75))
    assert row.spearman.value == pytest.approx(1.0) and row.kendall == pytest.approx(1.0)
    assert (row.n, row.total, row.average) == (4, 19.0, 4.75)
    # n = 4: the Fisher interval of r is tanh(atanh(r) -/+ 1.96 / sqrt(1))
    z = math.atanh(row.pearson.value)
    assert row.pearson.low == pytest.approx(math.tanh(z - 1.959964), abs=1e-6)
    assert row.pearson.high == pytest.approx(math.tanh(z + 1.959964), abs=1e-6)


def test_ties_match_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    x = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
    y = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4]
    assert average_ranks([10, 20, 20, 30]) == [1.0, 2.5, 2.5, 4.0]
    assert pearson(x, y).value == pytest.approx(stats.pearsonr(x, y).statistic)
    assert spearman(x, y).value == pytest.approx(stats.spearmanr(x, y).statistic)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic)  # tau-b by default
    low, high = stats.pearsonr(x, y).confidence_interval(0.95)
    assert (pearson(x, y).low, pearson(x, y).high) == (pytest.approx(low), pytest.approx(high))


def test_undefined_correlations() -> None:
    assert pearson([1, 1, 1], [1, 2, 3]).value is None  # a constant grader
    assert kendall_tau_b([1, 1], [2, 2]) is None


def test_sd_histogram_bins() -> None:
    human = {
        **HUMAN,
        "q5": {"a": 0, "b": 10},  # sd 5 -> 4-5
        "q6": {"a": 0, "b": 10, "c": 10, "d": 0},  # sd 5 -> 4-5
        "q7": {"a": 1, "b": 2, "c": 9},  # sd 3.56 -> 3-4
        "q8": {"a": 7},  # one scorer: no spread to measure
    }
    assert sd_histogram(human) == {"0": 2, "0-1": 2, "1-2": 0, "2-3": 0, "3-4": 1, "4-5": 2, ">5": 0}
    assert sd_histogram({"q": {"a": 0, "b": 0, "c": 10}})[">5"] == 0  # sd 4.71


def test_human_scores_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "h.csv"
    path.write_text(
        "question_id,scorer,score\nq1,h1,8\nq1,h1,9\nq2,h1,eleven\nq3,,5\nq4,h2,12\n", encoding="utf-8"
    )
    with pytest.raises(DataError) as info:
        read_human_scores(path)
    assert [str(e).split(": ", 1)[1] for e in info.value.errors] == [
        "field 'scorer': 'h1' already scored 'q1'",
        "field 'score': not a number: 'eleven'",
        "field 'scorer': empty",
        "field 'score': must be within 0-10, got 12",
    ]
    assert [e.line for e in info.value.errors] == [3, 4, 5, 6]
    path.write_text("id,score\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing column"):
        read_human_scores(path)
