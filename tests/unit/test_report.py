"""Report numbers on a hand-computed case: errors never count as wrong, unparsed does, open is ungraded."""

from __future__ import annotations

import json

import pytest

from kaoshi.benchmarks.common.statistics import ANSWER_METRICS, CATEGORY_AVERAGES
from kaoshi.report import render_summary, summarize
from kaoshi.report.render import metric_rows
from kaoshi.results.grading import apply_grades
from kaoshi.results.metric import measured
from kaoshi.results.standard import parse_standard_scores
from kaoshi.store import SampleRecord
from kaoshi.store.records import GradeRecord
from tests.support.stores import REPORT_SAMPLES, sample


def test_hand_computed_summary() -> None:
    summary = summarize("r", REPORT_SAMPLES, ["domain", "type"])
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


def test_qualbench_f1_overall_and_per_group_by_hand() -> None:
    """The QualBench F1 is a metric a benchmark declares (kaoshi.benchmarks.common.statistics), measured
    from the summary's samples overall and in every group, and rendered from what it measured."""
    bare = summarize("r", REPORT_SAMPLES, ["domain", "type"])
    assert bare.measurements == () and metric_rows(bare)[1].label.startswith("accuracy (macro")
    summary = measured(bare, ANSWER_METRICS)
    f1 = summary.measurement("f1_qualbench")
    assert f1 is not None and f1.column == "F1"
    # checked (gold, answer): (A,A) (B,B) (AB,"") (正确,错误) (错误,错误) (C,""); every gold label has
    # support 1. Precision: A 1, B 1, AB 0, 正确 0 (never predicted), 错误 1/2, C 0 -> P = 2.5/6;
    # R = accuracy = 3/6; F1 = 2PR/(P+R) = 5/11.
    assert f1.value == pytest.approx(5 / 11) and f1.text == "45.5%"
    # d1: (A,A) (B,B) (AB,""): P = 2/3, R = 2/3 -> 2/3. d2: (正确,错误) (错误,错误): P = 1/4, R = 1/2 -> 1/3
    assert f1.by_group["domain"]["d1"] == pytest.approx(2 / 3)
    assert f1.by_group["domain"]["d2"] == pytest.approx(1 / 3)
    assert f1.by_group["type"]["open"] is None  # nothing checked
    assert set(f1.by_group["domain"]) == set(summary.groups["domain"])
    as_json = summary.to_json()
    metrics = as_json["benchmark_metrics"]
    assert isinstance(metrics, dict)
    shown = metrics["F1 (QualBench: 2PR/(P+R), weighted P and R)"]
    assert shown["value"] == pytest.approx(5 / 11)
    assert shown["by_group"]["type"]["judge"] == pytest.approx(1 / 3)
    assert "f1_qualbench" not in json.dumps(as_json["groups"])  # a tally holds what every exam has
    labels = [row.label for row in metric_rows(summary)]
    assert "F1 (QualBench: 2PR/(P+R), weighted P and R)" in labels
    assert "weighted F1 (scikit-learn average=weighted)" in labels
    # the F1 column of the tally tables, after the interval: the overall and each group's value
    text = render_summary(summary, "md")
    assert "| n | accuracy | 95% CI | F1 | correct |" in text
    assert "| d1 | 4 | 66.7% |" in text and "| 66.7% | 2 |" in text


def test_ambiguous_answers_are_counted_in_every_format() -> None:
    summary = summarize("r", REPORT_SAMPLES, ["domain"])
    rates = {row.label: row.value for row in metric_rows(summary)}
    assert rates["ambiguous rate"] == pytest.approx(1 / 6)  # h of the 6 checked answers
    assert "| ambiguous |" in render_summary(summary, "md").split("\n\n")[1]  # the overall table's header
    assert "r — overall,all,ambiguous,1," in render_summary(summary, "csv")


def test_renderings() -> None:
    summary = measured(summarize("r", REPORT_SAMPLES, ["domain"]), ANSWER_METRICS)
    md = render_summary(summary, "md")
    # 3/6 has the Wilson interval 18.8%–81.2%
    assert "| all | 8 | 50.0% | 18.8–81.2 | 45.5% | 3 | 6 | 1 | 1 | 1 | 1 | 3/7 |" in md
    assert "| d1 | 4 | 66.7% | 20.8–93.9 | 66.7% | 2 | 3 | 1 | 0 | 1 | 0 | 2/4 |" in md
    csv_text = render_summary(summary, "csv").splitlines()
    assert csv_text[0] == "table,row,column,value,best"
    assert "r — by domain,d2,accuracy,50.0%,0" in csv_text
    table = render_summary(summary, "table")
    assert "d1" in table and "66.7%" in table
    latex = render_summary(summary, "latex")
    assert "\\begin{tabular}{lrrrrrrrrrrr}" in latex
    assert "all & 8 & 50.0\\% & 18.8–81.2 & 45.5\\% & 3 & 6 & 1 & 1 & 1 & 1 & 3/7 \\\\" in latex


def test_macro_and_micro_differ_by_hand() -> None:
    summary = summarize("r", REPORT_SAMPLES, ["domain"])
    assert summary.overall.accuracy == 0.5  # 3 of 6 graded questions
    assert summary.macro["domain"] == (2 / 3 + 1 / 2) / 2  # h has no domain: not in the domain mean
    metrics = {row.label: row.value for row in metric_rows(summary)}
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
    summary = measured(summarize("r", rows, ["category"]), (CATEGORY_AVERAGES,))
    averages = summary.measurement("category_average")
    assert averages is not None and averages.parts == {"STEM": 0.75, "Humanities": 0.0, "Average": 0.5}
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


def test_judged_open_answers_are_graded_and_earn_their_points() -> None:
    """The by-type row of open answers: one a judge scored 6/10 (graded, 3 of 5 points), one whose judge
    reply was unparsed (ungraded, no points), one nobody judged; counts and points agree everywhere."""
    open_answers = [
        sample(q, domain="d2", qtype="open", gold="参考", points=5.0, answer=None, correct=None, score=None)
        for q in ("o1", "o2", "o3")
    ]
    grades = {
        "o1": GradeRecord("o1", "careful:j", "ok", 6.0, 3.0, ()),
        "o2": GradeRecord("o2", "careful:j", "unparsed", None, None, ()),
    }
    samples = apply_grades([*REPORT_SAMPLES, *open_answers], grades)
    summary = measured(summarize("r", samples, ["domain", "type"]), ANSWER_METRICS)
    opened = summary.groups["type"]["open"]
    assert (opened.n, opened.graded, opened.judged, opened.ungraded) == (4, 1, 1, 3)
    assert (opened.scored, opened.points, opened.max_points) == (1, 3.0, 5.0)
    assert opened.accuracy is None and opened.interval is None
    # judged answers leave the accuracy (objective only) and the unparsed rate alone
    assert summary.overall.accuracy == 0.5 and summary.overall.graded == 7 and summary.overall.checked == 6
    assert {row.label: row.value for row in metric_rows(summary)}["unparsed rate"] == 1 / 6
    for table in (summary.groups["domain"], summary.groups["type"], {"all": summary.overall}):
        for name, tally in table.items():
            assert tally.scored == tally.graded, name  # every graded answer has points, and only those
            assert tally.graded + tally.ungraded + tally.errors == tally.n, name
    assert "| open | 4 | — | — | — | 0 | 1 | 0 | 0 | 0 | 3 | 3/5 |" in render_summary(summary, "md")


def test_summary_tallies_are_the_exact_sums_of_their_samples_in_any_order() -> None:
    """summarize counts rows that agree once, weighted: each tally equals its samples' counts added up,
    float points as their exact sum (math.fsum, rounded once), whatever order the samples are stored in
    (adding 0.7 one sample at a time drifts: 26.099999999999998 for 26.1)."""
    import math
    import random

    from kaoshi.results.aggregate import GROUP_KEYS, part_of
    from kaoshi.results.metrics import UNKNOWN_GROUP
    from kaoshi.results.tally import Tally

    kinds: list[dict[str, object]] = [
        {},
        {"status": "error", "correct": None, "error": "x"},
        {"status": "unparsed", "correct": False},
        {"status": "ambiguous", "correct": False},
        {"qtype": "open", "correct": None, "score": 0.1, "points": 0.7},
        {"qtype": "open", "correct": None, "score": None},
        {"correct": False, "truncated": True, "score": 0.3},
    ]
    samples = [
        sample(f"q{i}", **{"subject": f"s{i % 3}", "domain": f"d{i % 2}", **kinds[i % len(kinds)]})
        for i in range(40)
    ]
    summary = summarize("r", samples)
    shuffled = summarize("r", random.Random(7).sample(samples, len(samples)))

    def one_by_one(members: list[SampleRecord]) -> dict[str, object]:
        tallies = [Tally().add(s) for s in members]
        exact = {name: math.fsum(getattr(t, name) for t in tallies) for name in ("points", "max_points")}
        integers = {
            name: sum(getattr(t, name) for t in tallies)
            for name, value in Tally().__dict__.items()
            if isinstance(value, int) and not isinstance(value, bool)
        }
        return {**Tally().__dict__, **integers, **exact}

    def counts(tally: Tally) -> dict[str, object]:
        return dict(tally.__dict__)

    assert summary.overall.n == 40
    assert counts(summary.overall) == one_by_one(samples)
    assert summary.overall == shuffled.overall and summary.groups == shuffled.groups
    assert summary.groups["domain"]["d0"].max_points == 26.1  # one at a time: 26.099999999999998
    for key, table in summary.groups.items():
        for name, tally in table.items():
            members = [s for s in samples if (GROUP_KEYS[key](s) or UNKNOWN_GROUP) == name]
            assert counts(tally) == one_by_one(members), (key, name)
    for part, tally in summary.parts.items():
        assert counts(tally) == one_by_one([s for s in samples if part_of(s) == part])
