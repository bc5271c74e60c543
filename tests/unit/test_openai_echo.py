"""Reading a candidate's log-likelihood from an echo reply (openai_echo.py): by position in the prompt's
text, whatever units a server writes its offsets in."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaoshi.models import LoglikRequest
from kaoshi.models.openai_echo import EchoPrompt, NoPromptLogprobs, echo_prompts, read_echo
from kaoshi.models.openai_loglik import _shared_out
from kaoshi.models.openai_replies import FinalFailure
from kaoshi.models.tokens import FOLLOWING_TEXT
from tests.support.fake_openai import TOY_GENERATED, ToyToken, toy_echo

STYLES = ("chars", "bytes", "vllm", "llamacpp")


def prompt_for(context: str, scored: str, following: str = "") -> EchoPrompt:
    return EchoPrompt(scored, context + scored + following, len(context), len(context) + len(scored))


def reply(
    tokens: list[str], values: list[float | None], offsets: list[int], text: str = ""
) -> dict[str, Any]:
    logprobs = {"tokens": tokens, "token_logprobs": values, "text_offset": offsets, "top_logprobs": None}
    return {"index": 0, "text": text, "logprobs": logprobs}


def toy_reply(prompt: EchoPrompt, style: str, vocab: tuple[str, ...] = (), split: str = "") -> dict[str, Any]:
    tokens = toy_echo(prompt.text, vocab, split, style, generate=True)
    return reply(
        [t.text for t in tokens],
        [t.logprob for t in tokens],
        [t.offset for t in tokens],
        prompt.text + TOY_GENERATED,
    )


def truth(prompt: EchoPrompt, vocab: tuple[str, ...] = (), split: str = "") -> tuple[float, list[ToyToken]]:
    """The sum over the tokens that truly cover the candidate (a token crossing its start included),
    from the toy model's own record of what each token covers."""
    tokens = toy_echo(prompt.text, vocab, split, "chars", generate=True)
    chosen = [
        t
        for t in tokens
        if (t.start < prompt.end and t.stop > prompt.start)
        or (t.start == t.stop and prompt.start <= t.start < prompt.end)
    ]
    return sum(t.logprob or 0.0 for t in chosen), chosen


# (context, scored text, following text, the toy tokenizer's extra tokens, characters split in two)
CASES = [
    ("第一题\n答案：", "A", "", (), ""),
    ("第一题\n答案：", "AB\n\n", FOLLOWING_TEXT, (), ""),
    ("第一题\n答案：", "AB\n\n", FOLLOWING_TEXT, ("\n\n",), ""),  # '\n\n' one token inside, two before 题
    ("判断：", "正确", "", (), ""),
    ("判断：", "正确", "", ("正确",), ""),
    ("判断：", "错误", "", (), "：误"),  # split characters on both sides of the boundary
    ("题 the answer is", " B", "", (" the", " answer", " is", " B"), ""),  # SentencePiece-like
    ("答案：", "A", "", ("：A",), ""),  # the boundary inside a token
    ("答案：", "AB\n\n", FOLLOWING_TEXT, ("\n\n题",), ""),  # the end inside a token
    ("甲乙丙丁戊己庚辛壬癸" * 20, "C", "", (), "乙丁"),  # a long context with split characters
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(("context", "scored", "following", "vocab", "split"), CASES)
def test_every_style_reads_the_toy_models_sum(
    style: str, context: str, scored: str, following: str, vocab: tuple[str, ...], split: str
) -> None:
    prompt = prompt_for(context, scored, following)
    expected, chosen = truth(prompt, vocab, split)
    score = read_echo(toy_reply(prompt, style, vocab, split), prompt)
    assert score.logprob == pytest.approx(expected, abs=1e-12)
    assert score.tokens == len(chosen)
    crossing = any(t.start < prompt.start or t.stop > prompt.end for t in chosen)
    assert bool(score.spanning) == crossing


def test_a_token_across_the_boundary_is_counted_and_named() -> None:
    prompt = prompt_for("答案：", "A")
    tokens, values, offsets = ["答", "案", "：A", "的"], [None, -1.0, -0.25, -3.0], [0, 1, 2, 4]
    score = read_echo(reply(tokens, values, offsets), prompt)
    assert (score.logprob, score.tokens, score.spanning) == (-0.25, 1, ("：A",))


@pytest.mark.parametrize("shift", [0, 2, 3])
def test_only_the_tokens_near_the_candidate_are_read_but_shifted_offsets_are_found(shift: int) -> None:
    """Offsets shifted by what precedes the tokens read ('甲' counted in bytes: 2 more; a '<s>': 3) are
    found even where the text read repeats itself, and the tokens are then placed by their text."""
    context = "甲" + "a" * 30
    prompt = prompt_for(context, "a")
    tokens = ["甲", *["a"] * 31, "的"]
    values: list[float | None] = [None, *(-0.01 * k for k in range(1, 33))]
    offsets = [0, *(k + shift for k in range(1, 33))]
    score = read_echo(reply(tokens, values, offsets, prompt.text + "的"), prompt)
    assert score.logprob == pytest.approx(-0.31) and score.tokens == 1


def test_offsets_in_characters_and_in_bytes_agree() -> None:
    prompt = prompt_for("判断：", "正确")
    tokens, values = ["判", "断", "：", "正", "确", "的"], [None, -1.0, -2.0, -0.5, -0.25, -3.0]
    by_characters = read_echo(reply(tokens, values, [0, 1, 2, 3, 4, 5]), prompt)
    by_bytes = read_echo(reply(tokens, values, [0, 3, 6, 9, 12, 15]), prompt)
    assert by_characters.logprob == by_bytes.logprob == -0.75


def test_vllms_reply_shape() -> None:
    # As vLLM writes it (serving_completion.py, _create_completion_logprobs): the BOS decoded and counted
    # into the offsets, which add up the token strings' lengths; -inf clamped to -9999.0; the choice also
    # carries `prompt_logprobs`, which the echo reading does not need.
    prompt = prompt_for("答案：", "A")
    tokens = ["<|begin_of_text|>", "答案", "：", "A", "的"]
    choice = reply(tokens, [None, -3.0, -9999.0, -0.5, -2.0], [0, 17, 19, 20, 21], "答案：A的")
    choice["prompt_logprobs"] = [None, {"1": {"logprob": -3.0, "rank": 2, "decoded_token": "答案"}}]
    score = read_echo(choice, prompt)
    assert (score.logprob, score.tokens, score.spanning) == (-0.5, 1, ())


def test_offsets_are_taken_as_they_are_when_no_tokens_are_named() -> None:
    choice = reply(["答", "案", "A"], [None, -1.0, -0.5], [0, 1, 2])
    del choice["logprobs"]["tokens"]
    assert read_echo(choice, prompt_for("答案", "A")).logprob == -0.5


@pytest.mark.parametrize(
    ("prompt", "choice", "error"),
    [
        (prompt_for("", "A"), reply(["A", "的"], [None, -1.0], [0, 1]), "starts at the prompt's first token"),
        (
            prompt_for("题", "A"),
            reply(["题", "A", "的"], [None, None, -1.0], [0, 1, 2]),
            "log-probability of token 'A' is None, not a number <= 0",
        ),
        (
            prompt_for("题", "A"),
            reply(["题", "A", "的"], [None, math.nan, -1.0], [0, 1, 2]),
            "log-probability of token 'A' is nan",
        ),
        (prompt_for("题", "A"), reply(["题", "A"], [None, 0.5], [0, 1]), "is 0.5, not a number <= 0"),
        (prompt_for("题", "A"), reply(["题", "A"], [None, -1.0], [0]), "lists differ in length"),
        (prompt_for("题", "A"), reply(["题", "A"], [None, -1.0], [1, 0]), "not a rising position"),
        (prompt_for("题", "A"), reply(["题", "A"], [None, -1.0], [0, "1"]), "not a rising position"),  # type: ignore[list-item]
        (prompt_for("题目", "A"), reply(["题"], [None], [0]), "stops before candidate 'A' ends"),
        (
            prompt_for("题目", "A"),
            reply(["token_id:1", "token_id:2", "token_id:3"], [None, -1.0, -1.0], [0, 10, 20]),
            "do not match the prompt's text",
        ),
        (
            prompt_for("题目：", "正确"),  # the candidate's last piece and the generated one look alike
            reply(
                ["<s>", "题", "目", "：", "正", "\ufffd", "\ufffd", "\ufffd"],
                [None, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0],
                [0, 3, 4, 5, 6, 7, 8, 9],
            ),
            "cannot tell where candidate '正确' ends",
        ),
        (prompt_for("题", "A"), [1], "a choice of the reply is a list, not an object"),
    ],
)
def test_replies_that_cannot_be_read(prompt: EchoPrompt, choice: Any, error: str) -> None:
    with pytest.raises(FinalFailure, match=error.replace("(", r"\(").replace(")", r"\)")) as raised:
        read_echo(choice, prompt)
    assert not isinstance(raised.value, NoPromptLogprobs)


@pytest.mark.parametrize(
    ("choice", "error"),
    [
        ({"text": "题A", "logprobs": None}, "the reply has no logprobs"),
        ({"text": "的"}, "the reply has no logprobs"),
        (
            {"text": "的", "logprobs": {"content": [{"token": "的", "logprob": -1.0}]}},
            "no token_logprobs and text_offset (only the chat form's `content`)",
        ),
        (reply(["的"], [-1.0], [2], "的"), "it was not echoed"),
        (reply([], [], [], ""), "it was not echoed"),
    ],
)
def test_replies_without_prompt_logprobs(choice: dict[str, Any], error: str) -> None:
    with pytest.raises(NoPromptLogprobs) as raised:
        read_echo(choice, prompt_for("题", "A"))
    assert error in str(raised.value)


def test_prompts_keep_the_context_and_follow_a_whitespace_end_as_the_local_backends_do() -> None:
    request = LoglikRequest("q", "题\n答案：", ("A", "AB"), answer_end="\n\n")
    prompts = echo_prompts(request)
    assert [p.text for p in prompts] == [
        "题\n答案：A\n\n" + FOLLOWING_TEXT,
        "题\n答案：AB\n\n" + FOLLOWING_TEXT,
    ]
    assert [(p.start, p.end) for p in prompts] == [(5, 8), (5, 9)]
    bare = echo_prompts(LoglikRequest("q", "判断：", ("正确", "错误")))
    assert [(p.text, p.end) for p in bare] == [("判断：正确", 5), ("判断：错误", 5)]


tokens_st = st.lists(st.one_of(st.none(), st.text(max_size=4), st.integers()), max_size=12)
numbers_st = st.lists(st.one_of(st.none(), st.floats(), st.integers(), st.text(max_size=2)), max_size=12)
offsets_st = st.lists(st.one_of(st.integers(min_value=-2, max_value=40), st.none()), max_size=12)


@given(tokens=tokens_st, values=numbers_st, offsets=offsets_st, text=st.text(max_size=5))
def test_any_reply_is_read_or_refused_with_a_reason(
    tokens: list[Any], values: list[Any], offsets: list[Any], text: str
) -> None:
    prompt = prompt_for("题目" + text, "A")
    try:
        score = read_echo(reply(tokens, values, offsets, text), prompt)
    except FinalFailure as exc:
        assert str(exc)
    else:
        assert math.isfinite(score.logprob) and score.logprob <= 0 and score.tokens >= 1


# -- what a request of several questions cost, shared out ------------------------------------------------
@pytest.mark.parametrize(
    ("total", "shares", "expected"),
    [
        (None, [3, 4], [None, None]),
        (10, [1, 1], [5, 5]),
        (10, [1, 2], [3, 7]),  # 3.33 and 6.67: the larger remainder gets the unit left
        (7, [0, 5], [0, 7]),
        (4, [0, 0], [2, 2]),  # nothing to share by: evenly
        (100000000000498708, [0, 293584], [0, 100000000000498708]),  # exact past 2**53
        (8, [120, 1200], [1, 7]),
    ],
)
def test_a_requests_cost_is_shared_out_in_whole_numbers_that_add_up(
    total: int | None, shares: list[int], expected: list[int | None]
) -> None:
    assert _shared_out(total, shares) == expected
