"""The extraction table: every row a realistic output and the answer it must give."""

from __future__ import annotations

import pytest

from kaoshi.data.model import Question
from kaoshi.qtypes import extract_answer
from tests.support.extraction_cases import (
    AMBIGUOUS,
    JUDGE,
    MULTI,
    OPEN,
    SINGLE,
    UNPARSED,
)
from tests.support.questions import JUDGE_Q, MULTI_Q, OPEN_Q, SINGLE_Q


def check(question: Question, output: str, expected: object) -> None:
    result = extract_answer(question, output)
    if expected == UNPARSED:
        assert (result.status, result.answer) == ("unparsed", None), result
    elif expected == AMBIGUOUS:
        assert result.status == "ambiguous", result
    elif isinstance(expected, bool):
        assert (result.status, result.answer) == ("ok", expected), result
    else:
        assert (result.status, result.answer) == ("ok", frozenset(str(expected))), result


@pytest.mark.parametrize(("output", "expected"), SINGLE)
def test_single(output: str, expected: object) -> None:
    check(SINGLE_Q, output, expected)


@pytest.mark.parametrize(("output", "expected"), MULTI)
def test_multi(output: str, expected: object) -> None:
    check(MULTI_Q, output, expected)


@pytest.mark.parametrize(("output", "expected"), JUDGE)
def test_judge(output: str, expected: object) -> None:
    check(JUDGE_Q, output, expected)


@pytest.mark.parametrize(("output", "expected"), OPEN)
def test_open(output: str, expected: str) -> None:
    assert extract_answer(OPEN_Q, output).answer == expected


def test_table_size() -> None:
    assert len(SINGLE) + len(MULTI) + len(JUDGE) + len(OPEN) >= 200


def test_prompt_echo_is_removed() -> None:
    prompt = (
        "以下是中国关于消防考试的单项选择题，请选出其中的正确答案。\n\n"
        "例题\nA. 甲\nB. 乙\n答案：A\n\n扑救带电设备？\nA. 清水\nB. 泡沫\n答案："
    )
    # a base model repeats its input, answers, then invents the next question with its own answer
    output = prompt + "C\n\n下一题？\nA. 甲\nB. 乙\n答案：B"
    assert extract_answer(SINGLE_Q, output, prompt).answer == frozenset("C")
    # without the prompt the invented question's answer (the last statement) would have been read
    assert extract_answer(SINGLE_Q, output, None).answer == frozenset("B")
