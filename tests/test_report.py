"""Report numbers on a hand-computed case: errors never count as wrong, unparsed does, open is ungraded."""

from __future__ import annotations

import pytest

from kaoshi.report import render_summary, summarize
from kaoshi.report.render import metric_rows
from kaoshi.report.standard import parse_standard_scores
from kaoshi.store import SampleRecord
from tests.test_store import sample

SAMPLES = [
    # domain d1: 2 correct of 3 graded (one unparsed), plus one error
    sample(
        "a", domain="d1", qtype="single", gold=frozenset("A"), answer=frozenset("A"), points=1.0, score=1.0
    ),
    sample(
        "b", domain="d1", qtype="single", gold=frozenset("B"), answer=frozenset("B"), points=1.0, score=1.0
    ),
    sample(
        "c", domain="d1", qtype="multi", points=2.0, status="unparsed", answer=None, correct=False, score=0.0
    ),
    sample(
        "d",
        domain="d1",
        qtype="multi",
        points=2.0,
        status="error",
        answer=None,
        correct=None,
        score=None,
        error="timeout",
    ),
    # domain d2: 1 correct of 2 graded, one open question ungraded
    sample("e", domain="d2", qtype="judge", gold=True, answer=False, points=1.0, correct=False, score=0.0),
    sample("f", domain="d2", qtype="judge", gold=False, answer=False, points=1.0, correct=True, score=1.0),
    sample("g", domain="d2", qtype="open", points=5.0, answer="文本", correct=None, score=None),
    sample(
        "h",
        domain=None,
        qtype="single",
        gold=frozenset("C"),
        answer=None,
        status="ambiguous",
        points=1.0,
        correct=False,
        score=0.0,
    ),
]


def test_hand_computed_summary() -> None:
    summary = summarize("r", SAMPLES, ["domain", "type"])
    overall = summary.to_json()
    # graded: a b c e f h = 6; correct: a b f = 3
    assert {
        k: overall[k] for k in ("n", "graded", "correct", "unparsed", "ambiguous", "errors", "ungraded")
    } == {"n": 8, "graded": 6, "correct": 3, "unparsed": 1, "ambiguous": 1, "errors": 1, "ungraded": 1}
    assert overall["accuracy"] == 0.5
    assert (overall["points"], overall["max_points"]) == (3.0, 7.0)
    domains = summary.groups["domain"]
    assert list(domains) == ["(none)", "d1", "d2"]
    assert domains["d1"].accuracy == 2 / 3 and domains["d1"].errors == 1 and domains["d1"].n == 4
    assert domains["d2"].accuracy == 0.5 and domains["d2"].ungraded == 1
    assert summary.groups["type"]["open"].accuracy is None
    assert summary.groups["type"]["multi"].to_json()["accuracy"] == 0.0


def test_renderings() -> None:
    summary = summarize("r", SAMPLES, ["domain"])
    md = render_summary(summary, "md")
    # 3/6 has the Wilson interval 18.8%–81.2%
    assert "| all | 8 | 50.0% | 18.8–81.2 | 3 | 6 | 1 | 1 | 1 | 3/7 |" in md
    assert "| d1 | 4 | 66.7% | 20.8–93.9 | 2 | 3 | 1 | 1 | 0 | 2/4 |" in md
    csv_text = render_summary(summary, "csv").splitlines()
    assert csv_text[0] == "table,row,column,value,best"
    assert "r — by domain,d2,accuracy,50.0%,0" in csv_text
    table = render_summary(summary, "table")
    assert "d1" in table and "66.7%" in table
    latex = render_summary(summary, "latex")
    assert "\\begin{tabular}{lrrrrrrrrr}" in latex
    assert "all & 8 & 50.0\\% & 18.8–81.2 & 3 & 6 & 1 & 1 & 1 & 3/7 \\\\" in latex


def test_macro_and_micro_differ_by_hand() -> None:
    summary = summarize("r", SAMPLES, ["domain"])
    assert summary.overall.accuracy == 0.5  # 3 of 6 graded questions
    assert summary.macro["domain"] == (2 / 3 + 1 / 2) / 2  # h has no domain: not in the domain mean
    metrics = dict((label, value) for label, value, _ in metric_rows(summary))
    assert metrics["accuracy (macro, mean over domains)"] == (2 / 3 + 1 / 2) / 2
    assert metrics["unparsed rate"] == 1 / 6 and metrics["error rate"] == 1 / 8


def test_ceval_averages_are_means_of_subject_accuracies() -> None:
    def graded(qid: str, subject: str, category: str, correct: bool) -> SampleRecord:
        answer = frozenset("A") if correct else frozenset("B")
        return sample(
            qid,
            qtype="single",
            gold=frozenset("A"),
            answer=answer,
            points=1.0,
            subject=subject,
            category=category,
            correct=correct,
            score=float(correct),
        )

    rows = [
        graded("1", "s1", "STEM", True),
        graded("2", "s1", "STEM", False),
        *(graded(f"3{i}", "s2", "STEM", True) for i in range(3)),
        graded("4", "s3", "Humanities", False),
    ]
    summary = summarize("r", rows, ["category"])
    assert summary.category_averages == {"STEM": 0.75, "Humanities": 0.0, "Average": 0.5}
    assert summary.overall.accuracy == 4 / 6  # the micro average is a different number
    assert summary.groups["category"]["STEM"].accuracy == 4 / 5
    text = render_summary(summary, "md")
    assert "| accuracy | 75.0% | 0.0% | 50.0% |" in text


def test_points_scale_to_the_standard_score_with_group_totals() -> None:
    def scored(qid: str, subject: str, group: str, points: float, score: float | None) -> SampleRecord:
        return sample(
            qid,
            subject=subject,
            points=points,
            score=score,
            correct=None if score is None else score == points,
            question={"id": qid, "group": group},
        )

    rows = [
        scored("m1", "数学", "初中", 2.0, 2.0),
        scored("m2", "数学", "初中", 2.0, 1.0),  # partial credit
        scored("m3", "数学", "初中", 4.0, None),  # open question not graded yet: outside the total
        scored("c1", "语文", "初中", 5.0, 5.0),
        scored("p1", "物理", "高中", 1.0, 0.0),
        scored("p2", "物理", "高中", 1.0, 1.0),
    ]
    summary = summarize("r", rows, [], standards={"数学": 150, "语文": 100, "物理": 100})
    by_subject = {row.subject: row for row in summary.subject_points}
    assert (by_subject["数学"].points, by_subject["数学"].max_points) == (3.0, 4.0)
    assert (by_subject["数学"].scored, by_subject["数学"].questions) == (2, 3)
    assert by_subject["数学"].scaled == 112.5
    assert by_subject["语文"].scaled == 100.0 and by_subject["物理"].scaled == 50.0
    totals = {g.group: (g.scaled, g.standard, g.subjects) for g in summary.group_points}
    assert totals == {"初中": (212.5, 250.0, 2), "高中": (50.0, 100.0, 1)}
    text = render_summary(summary, "md")
    assert "| 数学 | 初中 | 3/4 | 2/3 | 150 | 112.5 |" in text
    assert "| 初中 | 2 | 212.5 | 250 |" in text


def test_standard_scores_parse_with_clear_errors() -> None:
    assert parse_standard_scores("数学=150, 语文=100") == {"数学": 150.0, "语文": 100.0}
    for bad in ("数学", "数学=0", "=100", "数学=abc"):
        with pytest.raises(ValueError, match="SUBJECT=POSITIVE_NUMBER"):
            parse_standard_scores(bad)
