"""Arbitrary replies never crash the extractors, never yield a letter that is not an option, and degenerate
replies (a small model looping for thousands of characters) are read in linear time."""

from __future__ import annotations

import time

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kaoshi.qtypes import extract_answer
from tests.support.questions import JUDGE_Q, MULTI_Q, SINGLE_Q

# Characters the extractors react to, so generated text reaches their branches.
_ALPHABET = st.sampled_from(
    [
        *"ABCDEFGHIJabc 、，,。.:：()（）【】\n*<>/",
        *("答案", "是", "为", "正确", "错误", "不", "对", "错", "该说法", "有误", "选"),
        *("<think>", "</think>"),
        *("the answer is ", "not ", "true", "false", "<eoa>", "\\boxed{", "}", "两项", "解析："),
    ]
)
_REPLIES = st.lists(_ALPHABET, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_REPLIES)
@example("答案：A" + " " * 5000 + "x")
@example("A、" * 3000)
@example("答案" + "是" * 5000)
@example("该说法正确与否需要分析。正确的做法是走楼梯。因此，" * 300)
def test_any_reply_gives_a_valid_answer_or_none(reply: str) -> None:
    for question in (SINGLE_Q, MULTI_Q):
        result = extract_answer(question, reply)
        assert result.status in ("ok", "unparsed", "ambiguous")
        if result.status == "ok":
            assert isinstance(result.answer, frozenset)
            assert result.answer and result.answer <= frozenset(question.letters)
            if question is SINGLE_Q:
                assert len(result.answer) == 1
        if result.status == "unparsed":
            assert result.answer is None
    verdict = extract_answer(JUDGE_Q, reply)
    assert verdict.answer in (True, False, None)
    assert (verdict.answer is None) == (verdict.status == "unparsed")


def test_degenerate_replies_are_read_in_linear_time() -> None:
    # Not a benchmark: the linear extractors read these 20k-character replies in about 1 s on a 2-core
    # machine; the quadratic patterns this guards against took 1.6 s for 5k characters, so ~25 s here.
    replies = ["答案：A" + " " * 20000 + "x", "A、" * 10000, "答案" + "是" * 20000, "正确的做法，" * 3400]
    start = time.perf_counter()
    for reply in replies:
        for question in (SINGLE_Q, MULTI_Q, JUDGE_Q):
            extract_answer(question, reply)
    assert time.perf_counter() - start < 10.0
