"""A reply's reasoning (a reasoning model's `reasoning_content`) is kept on its sample, apart from the answer
text: build_sample copies it, extraction and grading never read it, `kaoshi samples` writes it only where set,
and the report's question browser carries it only for the samples that have it."""

from __future__ import annotations

from dataclasses import replace

from kaoshi.models.base import ModelOutput
from kaoshi.prompts import Prompt
from kaoshi.report.html import sample_view
from kaoshi.runner.samples import PendingQuestion, build_sample, read_output
from kaoshi.store.records import Method, SampleStatus
from tests.support.questions import SINGLE_Q
from tests.support.stores import SPEC, sample

PENDING = PendingQuestion(SINGLE_Q, 0, Prompt("题目", 0))
REASONING = "先看选项A，不对；再看C，答案是C。"
GOLD_B = replace(SINGLE_Q, answer=frozenset("B"))


def test_build_sample_copies_the_reasoning() -> None:
    answered = build_sample(PENDING, ModelOutput("s", text="答案：C", reasoning=REASONING), SPEC)
    assert answered.status is SampleStatus.OK and answered.reasoning == REASONING
    assert answered.response == "答案：C"  # the reasoning is not folded into the response
    failed = build_sample(PENDING, ModelOutput("s", error="too long", reasoning=REASONING), SPEC)
    assert failed.status is SampleStatus.ERROR and failed.reasoning == REASONING
    assert build_sample(PENDING, ModelOutput("s", text="答案：C"), SPEC).reasoning is None


def test_the_answer_is_read_from_the_text_never_the_reasoning() -> None:
    output = ModelOutput("s", text="答案：B", reasoning="答案是C")
    assert read_output(GOLD_B, output, Method.GENERATE).extraction.answer == frozenset("B")
    pending = PendingQuestion(GOLD_B, 0, Prompt("题目", 0))
    graded = build_sample(pending, output, SPEC)
    assert graded.status is SampleStatus.OK and graded.answer == frozenset("B")
    assert graded.correct is True and graded.score == GOLD_B.points
    # reasoning alone, with no answer text, gives no answer
    alone = build_sample(pending, ModelOutput("s", text="", reasoning="答案是B"), SPEC)
    assert alone.status is SampleStatus.UNPARSED and alone.answer is None and alone.correct is False


def test_a_sample_line_has_the_reasoning_only_when_set() -> None:
    assert "reasoning" not in sample("q").to_json()
    assert sample("q", reasoning=REASONING).to_json()["reasoning"] == REASONING
    assert sample("q", reasoning="").to_json()["reasoning"] == ""  # stored as given


def test_the_report_browser_carries_the_reasoning_only_where_a_sample_has_some() -> None:
    assert "reasoning" not in sample_view(sample("q"), True, False)
    assert "reasoning" not in sample_view(sample("q", reasoning=""), True, False)
    assert sample_view(sample("q", reasoning=REASONING), True, False)["reasoning"] == REASONING
