"""Report numbers on a hand-computed case: errors never count as wrong, unparsed does, open is ungraded."""

from __future__ import annotations

from kaoshi.report import render_summary, summarize
from tests.test_store import sample

SAMPLES = [
    # domain d1: 2 correct of 3 graded (one unparsed), plus one error
    sample("a", domain="d1", qtype="single", points=1.0, correct=True, score=1.0),
    sample("b", domain="d1", qtype="single", points=1.0, correct=True, score=1.0),
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
    sample("e", domain="d2", qtype="judge", points=1.0, correct=False, score=0.0),
    sample("f", domain="d2", qtype="judge", points=1.0, correct=True, score=1.0),
    sample("g", domain="d2", qtype="open", points=5.0, answer="文本", correct=None, score=None),
    sample("h", domain=None, qtype="single", points=1.0, status="ambiguous", correct=False, score=0.0),
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
    assert "| all | 8 | 50.0% | 3 | 6 | 1 | 1 | 1 | 3/7 |" in md
    assert "| d1 | 4 | 66.7% | 2 | 3 | 1 | 1 | 0 | 2/4 |" in md
    csv_text = render_summary(summary, "csv").splitlines()
    assert csv_text[0] == "run,by,group,n,accuracy,correct,graded,unparsed,errors,ungraded,points"
    assert "r,domain,d2,3,50.0%,1,2,0,0,1,1/2" in csv_text
    table = render_summary(summary, "table")
    assert "d1" in table and "66.7%" in table
