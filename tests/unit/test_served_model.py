"""A reply a server says came from another model than the one asked for: build_sample keeps the served
model on the sample, `kaoshi samples` writes it only where set, and the summary counts it per model."""

from __future__ import annotations

from dataclasses import replace

from kaoshi.models.base import ModelOutput
from kaoshi.prompts import Prompt
from kaoshi.report import render_summary, summarize
from kaoshi.report.render import served_note
from kaoshi.runner.samples import PendingQuestion, build_sample
from kaoshi.store.records import SampleStatus
from tests.support.questions import SINGLE_Q
from tests.support.stores import SPEC, sample

PENDING = PendingQuestion(SINGLE_Q, 0, Prompt("题目", 0))
ROUTED = "gpt-4o-mini-2024-07-18"


def test_build_sample_copies_the_served_model() -> None:
    answered = build_sample(PENDING, ModelOutput("s", text="答案：C", served_model=ROUTED), SPEC)
    assert answered.status is SampleStatus.OK and answered.served_model == ROUTED
    failed = build_sample(PENDING, ModelOutput("s", error="too long", served_model=ROUTED), SPEC)
    assert failed.status is SampleStatus.ERROR and failed.served_model == ROUTED
    assert build_sample(PENDING, ModelOutput("s", text="答案：C"), SPEC).served_model is None


def test_a_sample_line_names_the_served_model_only_when_set() -> None:
    assert "served_model" not in sample("q").to_json()
    assert sample("q", served_model=ROUTED).to_json()["served_model"] == ROUTED


def test_the_summary_counts_each_served_model_most_first() -> None:
    samples = [
        sample("a", served_model="b-model"),
        sample("b", served_model=ROUTED),
        sample("c", served_model=ROUTED),
        sample("d", served_model="a-model"),
        sample("e"),
    ]
    summary = summarize("r", samples)
    assert list(summary.served_models.items()) == [(ROUTED, 2), ("a-model", 1), ("b-model", 1)]
    assert summary.to_json()["served_models"] == {ROUTED: 2, "a-model": 1, "b-model": 1}
    note = served_note(replace(summary, spec=SPEC))
    assert note == (
        f"4 of 5 replies were served by another model than random: {ROUTED} (2), a-model (1), b-model (1)"
    )
    one = summarize("r", [sample("a", served_model=ROUTED), sample("b")])
    asked = "the one asked for"  # a summary of samples alone has no spec
    assert served_note(one) == f"1 of 2 replies was served by another model than {asked}: {ROUTED} (1)"


def test_nothing_is_said_when_every_reply_came_from_the_asked_model() -> None:
    summary = replace(summarize("r", [sample("a"), sample("b")]), spec=SPEC)
    assert summary.served_models == {} and "served_models" not in summary.to_json()
    assert served_note(summary) == ""
    assert "served by another model" not in render_summary(summary, "md")


def test_the_note_is_under_the_overall_table_only() -> None:
    samples = [sample("a", domain="d1", served_model=ROUTED), sample("b", domain="d2")]
    text = render_summary(replace(summarize("r", samples), spec=SPEC), "md")
    assert text.count("served by another model") == 1
    overall = text.split("### r — by")[0]
    assert f"1 of 2 replies was served by another model than random: {ROUTED} (1)" in overall
