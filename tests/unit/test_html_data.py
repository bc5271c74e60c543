"""What the HTML report's question browser is given: the groupings the report's questions carry, each
with its filter options and counts, and the page's columns and filters made from them."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from kaoshi.report.html import (
    ReportRun,
    browser_data,
    browser_json,
    build_html,
    embed_json,
    ordered_choices,
    write_html,
)
from kaoshi.results.aggregate import summarize
from kaoshi.store.records import RunRecord, RunStatus, SampleRecord
from tests.support.stores import SPEC, sample

HOSTILE = '<img src=x onerror="window.__pwned=1">'

# A C-Eval-like run: subjects and their categories, no domain.
CEVAL_LIKE = [
    sample("c1", qtype="single", domain=None, subject="computer_network", category="STEM"),
    sample("c2", qtype="single", domain=None, subject="art_studies", category="Humanities"),
    sample("c3", qtype="single", domain=None, subject="college_physics", category="STEM"),
    sample("c4", qtype="single", domain=None, subject=HOSTILE, category="Other"),
    sample("c5", qtype="single", domain=None, subject="law", category="Social Science"),
    sample("c6", qtype="single", domain=None, subject="computer_network", category="STEM"),
]
# A QualBench-like run: domains and question types, nothing else.
QUALBENCH_LIKE = [
    sample("q1", qtype="judge", domain="安全生产"),
    sample("q2", qtype="single", domain="信息技术"),
    sample("q3", qtype="multi", domain="安全生产"),
    sample("q4", qtype="open", domain="经济金融"),
]


def report_run(name: str, samples: Sequence[SampleRecord]) -> ReportRun:
    record = RunRecord(name, SPEC, RunStatus.FINISHED, 0.0, 1.0, len(samples))
    return ReportRun(record, summarize(name, samples).without_unused_groups(), samples)


def test_a_ceval_like_run_is_browsed_by_category_subject_and_type_not_domain() -> None:
    data = browser_data([report_run("c", CEVAL_LIKE)])
    assert data["groupings"] == ["category", "subject", "type"]
    choices = data["runs"][0]["choices"]
    # Categories in the order the category tables show them; subjects by name; each with its count.
    assert choices["category"] == [("STEM", 3), ("Social Science", 1), ("Humanities", 1), ("Other", 1)]
    assert choices["subject"] == [
        (HOSTILE, 1),
        ("art_studies", 1),
        ("college_physics", 1),
        ("computer_network", 2),
        ("law", 1),
    ]
    assert choices["type"] == [("single", 6)]
    first = data["runs"][0]["samples"][0]
    assert first["groups"] == {"category": "STEM", "subject": "computer_network", "type": "single"}


def test_a_qualbench_like_run_is_browsed_by_domain_and_type() -> None:
    data = browser_data([report_run("q", QUALBENCH_LIKE)])
    assert data["groupings"] == ["domain", "type"]
    choices = data["runs"][0]["choices"]
    assert [value for value, _ in choices["type"]] == ["single", "multi", "judge", "open"]  # kaoshi's order
    assert dict(choices["domain"]) == {"安全生产": 2, "信息技术": 1, "经济金融": 1}


def test_groupings_cover_every_run_and_questions_without_a_value_are_listed_last() -> None:
    mixed = [*QUALBENCH_LIKE, sample("x1", qtype="single", domain=None, subject="数学")]
    data = browser_data([report_run("a", QUALBENCH_LIKE), report_run("b", mixed)])
    assert data["groupings"] == ["domain", "subject", "type"]  # subject: one question of run b has one
    first, second = data["runs"]
    assert first["choices"]["subject"] == [("(none)", 4)]
    assert second["choices"]["domain"][-1] == ("(none)", 1) and data["none"] == "(none)"
    assert second["samples"][-1]["groups"] == {"domain": None, "subject": "数学", "type": "single"}


def test_a_grouping_that_repeats_an_earlier_one_is_shown_once() -> None:
    same = [sample(f"s{i}", domain=d, subject=d) for i, d in enumerate(("安全生产", "信息技术"))]
    assert browser_data([report_run("s", same)])["groupings"] == ["domain", "type"]
    differs = [*same, sample("s9", domain="安全生产", subject=None)]
    assert browser_data([report_run("d", differs)])["groupings"] == ["domain", "subject", "type"]


def test_subject_names_sort_by_their_numbers() -> None:
    samples = [sample(str(i), domain=None, subject=f"part {i}") for i in (10, 2, 1)]
    choices = browser_data([report_run("n", samples)])["runs"][0]["choices"]["subject"]
    assert [value for value, _ in choices] == ["part 1", "part 2", "part 10"]


def test_the_page_has_a_column_and_filter_per_grouping_and_keeps_names_as_data() -> None:
    html = build_html([report_run("c", CEVAL_LIKE)], [])
    header = html.split('<table id="questions">')[1].split("</thead>")[0]
    assert "<th>subject</th>" in header and "<th>category</th>" in header and "domain" not in header
    assert 'id="f-subject"' in html and 'id="f-category"' in html and 'id="f-domain"' not in html
    assert HOSTILE not in html  # only escaped, inside the JSON
    embedded = html.split('<script type="application/json" id="kaoshi-data">')[1].split("</script>")[0]
    assert json.loads(embedded)["runs"][0]["choices"]["subject"][0] == [HOSTILE, 1]


def test_filter_options_order_numbers_by_value_whatever_their_length() -> None:
    """A subject named by a 5,000-digit number is past what int() reads; it sorts after shorter ones."""
    huge = "卷" + "9" * 5_000
    counts = {"卷10": 1, "卷2": 1, "卷002": 1, huge: 1, "卷1": 1, "Ab": 1, "aa": 1}
    assert [value for value, _ in ordered_choices("subject", counts, None)] == [
        "aa",
        "Ab",
        "卷1",
        "卷002",
        "卷2",
        "卷10",
        huge,
    ]


# Text with every character embed_json escapes, and the characters around them.
ESCAPED = ["</script>", "a<b>c&d", "\u2028\u2029", "甲<乙>&丙\u2028", "plain", "", "<<&&>>", "\\u003c"]


@pytest.mark.parametrize("text", ESCAPED)
def test_embedded_json_escapes_what_could_end_the_script_element(text: str) -> None:
    embedded = embed_json({"t": text, "list": [text, 1, None]})
    assert not set("<>&\u2028\u2029") & set(embedded)
    assert json.loads(embedded) == {"t": text, "list": [text, 1, None]}
    reference = json.dumps({"t": text, "list": [text, 1, None]}, ensure_ascii=False, separators=(",", ":"))
    expected = reference.translate(
        {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028", 0x2029: "\\u2029"}
    )
    assert embedded == expected


def _once(samples: Sequence[SampleRecord]) -> Iterator[SampleRecord]:
    """The samples as a store streams them: one pass, then nothing."""
    yield from samples


def test_the_streamed_data_is_the_embedded_json_of_the_browser_data() -> None:
    mixed = [*QUALBENCH_LIKE, sample("x1", qtype="single", domain=None, subject=HOSTILE)]
    runs = [report_run("a", QUALBENCH_LIKE), report_run("b", mixed), report_run("c", CEVAL_LIKE)]
    assert "".join(browser_json(runs)) == embed_json(browser_data(runs))
    assert "".join(browser_json(runs, with_prompts=False)) == embed_json(browser_data(runs, False))


def test_a_report_reads_each_run_once_for_its_filters_and_once_for_its_questions() -> None:
    """Samples streamed (each of `samples` and `groups` iterable once) make the page that held ones make."""
    held = report_run("c", CEVAL_LIKE)
    streamed = replace(held, samples=_once(CEVAL_LIKE), groups=_once(CEVAL_LIKE))
    written = io.StringIO()
    write_html(written, [streamed], [])
    page = build_html([held], [])
    generated = re.compile(r"generated [0-9T:-]+")
    assert generated.sub("", written.getvalue()) == generated.sub("", page)
    assert '"samples":[{' in page and page.count('"id":"c') == len(CEVAL_LIKE)


def test_samples_given_once_without_groups_are_refused_not_shown_empty() -> None:
    held = report_run("c", CEVAL_LIKE)
    with pytest.raises(ValueError, match="iterator"):
        build_html([replace(held, samples=_once(CEVAL_LIKE))], [])
