"""Judge-score parsing, table-driven over realistic judge replies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaoshi.prompts.judge import judge_prompt
from kaoshi.scoring.judge_parse import parse_judge_score
from tests.support.judge_cases import (
    CAREFUL_PROMPT,
    DEBATE_CASES,
    DEBATE_PROMPT,
    JUDGE_CASES,
    PROMPT_CASES,
)


def test_the_table_is_large_enough() -> None:
    assert len(JUDGE_CASES) >= 90 and len(PROMPT_CASES) + len(DEBATE_CASES) >= 12


@pytest.mark.parametrize(("reply", "expected"), JUDGE_CASES)
def test_judge_score(reply: str, expected: float | None) -> None:
    parsed = parse_judge_score(reply)
    assert parsed.score == expected, reply
    assert parsed.status == ("unparsed" if expected is None else "ok")


@pytest.mark.parametrize(("reply", "expected"), JUDGE_CASES)
def test_knowing_the_prompt_changes_no_reply_of_the_table(reply: str, expected: float | None) -> None:
    assert parse_judge_score(reply, CAREFUL_PROMPT).score == expected, reply
    assert parse_judge_score(reply, DEBATE_PROMPT).score == expected, reply


@pytest.mark.parametrize(("reply", "expected"), PROMPT_CASES)
def test_numbers_copied_from_the_prompt_are_not_scores(reply: str, expected: float | None) -> None:
    parsed = parse_judge_score(reply, CAREFUL_PROMPT)
    assert parsed.score == expected, reply
    assert parsed.status == ("unparsed" if expected is None else "ok")


@pytest.mark.parametrize(("reply", "expected"), DEBATE_CASES)
def test_the_second_judge_of_a_debate(reply: str, expected: float | None) -> None:
    assert parse_judge_score(reply, DEBATE_PROMPT).score == expected, reply


@pytest.mark.parametrize("mode", ["careful", "general"])
def test_a_judge_repeating_its_prompt_never_scores(mode: str) -> None:
    """The SmolLM2 failure: echoes of the scale, rubric and output template read as 10/10."""
    prompt = judge_prompt(mode, "简述光合作用的意义。", "提供有机物和氧气。", "植物会长大。")
    assert parse_judge_score(prompt, prompt).status == "unparsed"
    for line in prompt.splitlines():
        assert parse_judge_score(line, prompt).status == "unparsed", line


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CAREFUL_PROMPT.splitlines()), max_size=12))
def test_any_sequence_of_prompt_lines_is_unparsed(lines: list[str]) -> None:
    assert parse_judge_score("\n".join(lines), CAREFUL_PROMPT).status == "unparsed"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CAREFUL_PROMPT.splitlines()), max_size=8), st.integers(0, 10))
def test_a_labelled_score_survives_any_echo_of_the_prompt(lines: list[str], score: int) -> None:
    """`答案2得分：N` wherever it stands among copied prompt lines (the judge's own line differs from the
    template's `答案2得分：X` at the number)."""
    for position in (0, len(lines) // 2, len(lines)):
        reply = "\n".join([*lines[:position], f"答案2得分：{score}", *lines[position:]])
        assert parse_judge_score(reply, CAREFUL_PROMPT).score == score, reply


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.one_of(st.none(), st.text(max_size=300)))
def test_arbitrary_replies_never_crash(reply: str, prompt: str | None) -> None:
    parsed = parse_judge_score(reply, prompt)
    assert (parsed.score is None) == (parsed.status == "unparsed")
    assert parsed.score is None or 0 <= parsed.score <= 10
