"""Reading a candidate's log-likelihood from an echo reply (openai_echo.py): by position in the prompt's
text, whatever units a server writes its offsets in."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaoshi.models import LoglikRequest
from kaoshi.models.openai_echo import (
    ECHO_SUFFIX,
    EchoMismatch,
    EchoPrompt,
    NoPromptLogprobs,
    echo_prompts,
    match_choices,
    read_echo,
)
from kaoshi.models.openai_loglik import _shared_out
from kaoshi.models.openai_replies import FinalFailure
from kaoshi.models.tokens import FOLLOWING_TEXT
from tests.support.fake_openai import TOY_GENERATED, ToyToken, toy_echo

STYLES = ("chars", "bytes", "vllm", "llamacpp")


def prompt_for(context: str, scored: str, following: str = "", suffix: str = ECHO_SUFFIX) -> EchoPrompt:
    text = context + scored + following + suffix
    return EchoPrompt(scored, text, len(context), len(context) + len(scored))


def reply(
    tokens: list[str], values: list[float | None], offsets: list[int], text: str | None = None
) -> dict[str, Any]:
    """A choice of an echo reply; without `text` its tokens alone must show the prompt."""
    logprobs = {"tokens": tokens, "token_logprobs": values, "text_offset": offsets, "top_logprobs": None}
    choice: dict[str, Any] = {"index": 0, "logprobs": logprobs}
    if text is not None:
        choice["text"] = text
    return choice


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
    tokens, values, offsets = ["答", "案", "：A", " ", "的"], [None, -1.0, -0.25, -2.0, -3.0], [0, 1, 2, 4, 5]
    score = read_echo(reply(tokens, values, offsets), prompt)
    assert (score.logprob, score.tokens, score.spanning) == (-0.25, 1, ("：A",))


@pytest.mark.parametrize("shift", [0, 2, 3, -1])
def test_offsets_do_not_place_the_tokens_their_text_does(shift: int) -> None:
    """Offsets shifted by what precedes the tokens ('甲' counted in bytes: 2 more; a '<s>': 3) or wrong
    in any way change nothing: each token is placed by its text along the prompt sent."""
    context = "甲" + "a" * 30
    prompt = prompt_for(context, "a")
    tokens = ["甲", *["a"] * 31, " ", "的"]
    values: list[float | None] = [None, *(-0.01 * k for k in range(1, 34))]
    offsets = [0, *(max(0, k + shift) for k in range(1, 34))]
    score = read_echo(reply(tokens, values, offsets, prompt.text + "的"), prompt)
    assert score.logprob == pytest.approx(-0.31) and score.tokens == 1


def test_offsets_in_characters_and_in_bytes_agree() -> None:
    prompt = prompt_for("判断：", "正确")
    tokens, values = ["判", "断", "：", "正", "确", " ", "的"], [None, -1.0, -2.0, -0.5, -0.25, -1.0, -3.0]
    by_characters = read_echo(reply(tokens, values, [0, 1, 2, 3, 4, 5, 6]), prompt)
    by_bytes = read_echo(reply(tokens, values, [0, 3, 6, 9, 12, 15, 16]), prompt)
    assert by_characters.logprob == by_bytes.logprob == -0.75


def test_vllms_reply_shape() -> None:
    # As vLLM writes it (serving_completion.py, _create_completion_logprobs): the BOS decoded and counted
    # into the offsets, which add up the token strings' lengths; -inf clamped to -9999.0; the choice also
    # carries `prompt_logprobs`, which the echo reading does not need.
    prompt = prompt_for("答案：", "A")
    tokens = ["<|begin_of_text|>", "答案", "：", "A", " ", "的"]
    choice = reply(tokens, [None, -3.0, -9999.0, -0.5, -1.0, -2.0], [0, 17, 19, 20, 21, 22], "答案：A 的")
    choice["prompt_logprobs"] = [None, {"1": {"logprob": -3.0, "rank": 2, "decoded_token": "答案"}}]
    score = read_echo(choice, prompt)
    assert (score.logprob, score.tokens, score.spanning) == (-0.5, 1, ())


def test_a_reply_without_tokens_cannot_be_checked_and_is_not_read() -> None:
    """Offsets alone may count characters, bytes or a BOS: read blindly they scored every candidate of a
    hostile run from the wrong tokens (issue 40)."""
    choice = reply(["答", "案", "A", " "], [None, -1.0, -0.5, -1.0], [0, 1, 2, 3], "答案A 的")
    del choice["logprobs"]["tokens"]
    with pytest.raises(NoPromptLogprobs, match="cannot be checked against the prompt sent"):
        read_echo(choice, prompt_for("答案", "A"))


# -- another prompt's echo is never read as this prompt's ------------------------------------------------
def echo_of(prompt: EchoPrompt, text: bool = True, style: str = "chars", split: str = "") -> dict[str, Any]:
    tokens = toy_echo(prompt.text, (), split, style, generate=True)
    shown = prompt.text + TOY_GENERATED if text else None
    return reply([t.text for t in tokens], [t.logprob for t in tokens], [t.offset for t in tokens], shown)


SENT = prompt_for("第一题\n答案：", "A")
OTHERS = {
    "a longer candidate": prompt_for("第一题\n答案：", "AB"),
    "another candidate": prompt_for("第一题\n答案：", "B"),
    "another question": prompt_for("第二题\n答案：", "A"),
    "a shorter context": prompt_for("一题\n答案：", "A"),
    "no suffix": prompt_for("第一题\n答案：", "A", suffix=""),
}


@pytest.mark.parametrize("text", [True, False], ids=["with text", "tokens only"])
@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("other", OTHERS.values(), ids=OTHERS.keys())
def test_another_prompts_echo_is_refused(other: EchoPrompt, style: str, text: bool) -> None:
    with pytest.raises(EchoMismatch) as raised:
        read_echo(echo_of(other, text, style), SENT)
    assert not isinstance(raised.value, NoPromptLogprobs)


@pytest.mark.parametrize("style", ["vllm", "llamacpp"])
def test_a_character_only_pieces_show_must_be_vouched_for_by_the_text(style: str) -> None:
    """'确' split over byte tokens: its pieces stand for whatever character is there, so a reply of
    '正误' would pass for '正确' on its tokens alone; the echoed text shows which prompt it was."""
    sent, other = prompt_for("判断：", "正确"), prompt_for("判断：", "正误")
    expected, _ = truth(sent, split="确")
    assert read_echo(echo_of(sent, True, style, split="确"), sent).logprob == pytest.approx(expected)
    with pytest.raises(EchoMismatch, match="no text to show it echoes this prompt"):
        read_echo(echo_of(sent, False, style, split="确"), sent)
    with pytest.raises(EchoMismatch, match="echoes another prompt"):
        read_echo(echo_of(other, True, style, split="误"), sent)


def test_a_candidate_split_into_byte_pieces_ends_where_the_suffix_begins() -> None:
    """As llama-cpp-python writes a byte-level tokenizer's echo (llama_cpp/llama.py: each token decoded
    alone with errors='ignore', offsets from the decoded prefix): every piece of '确' is '' at 确's
    offset, and the generated token may be a piece too. Without the suffix nothing tells where 正确
    ends; with it, the space's token closes the candidate (issue 40: a 判断题 over HTTP)."""
    for suffix, readable in (("", False), (ECHO_SUFFIX, True)):
        prompt = prompt_for("判断：", "正确", suffix=suffix)
        tokens = ["判", "断", "：", "正", "", "", *([suffix] if suffix else []), ""]
        values: list[float | None] = [
            None,
            -1.0,
            -1.0,
            -0.5,
            -0.25,
            -0.125,
            *([-2.0] if suffix else []),
            -3.0,
        ]
        offsets = [0, 1, 2, 3, 4, 4, *([5] if suffix else []), len(prompt.text)]
        choice = reply(tokens, values, offsets, prompt.text)
        if readable:
            assert read_echo(choice, prompt).logprob == -0.875
        else:
            with pytest.raises(EchoMismatch, match="cannot tell where candidate '正确' ends"):
                read_echo(choice, prompt)


def test_a_token_hiding_partial_bytes_is_placed_over_them() -> None:
    """llama-cpp-python drops a token's partial bytes: a token holding the tail of '正' and all of '确'
    shows '确' one character on; it covers both."""
    prompt = prompt_for("判断：", "正确")
    tokens, values = ["判", "断", "：", "", "确", " ", "的"], [None, -1.0, -1.0, -0.5, -0.25, -1.0, -2.0]
    assert (
        read_echo(reply(tokens, values, [0, 1, 2, 3, 3, 5, 6], prompt.text + "的"), prompt).logprob == -0.75
    )
    hidden = ["判", "断", "：", "确", " ", "的"]
    choice = reply(hidden, [None, -1.0, -1.0, -0.25, -1.0, -2.0], [0, 1, 2, 3, 5, 6], prompt.text + "的")
    assert read_echo(choice, prompt).logprob == -0.25
    with pytest.raises(EchoMismatch, match="no text"):
        read_echo(reply(hidden, [None, -1.0, -1.0, -0.25, -1.0, -2.0], [0, 1, 2, 3, 5, 6]), prompt)


def test_more_than_the_generated_token_after_the_prompt_is_another_prompts_echo() -> None:
    prompt = prompt_for("题：", "A")
    tokens = ["题", "：", "A", " ", "B", " ", "的"]
    with pytest.raises(EchoMismatch, match="3 tokens after the prompt"):
        read_echo(reply(tokens, [None, *[-1.0] * 6], list(range(7))), prompt)


@pytest.mark.parametrize(
    ("prompt", "choice", "error"),
    [
        (
            prompt_for("", "A"),
            reply(["A", " ", "的"], [None, -1.0, -1.0], [0, 1, 2]),
            "starts at the prompt's first token",
        ),
        (
            prompt_for("题", "A"),
            reply(["题", "A", " ", "的"], [None, None, -1.0, -1.0], [0, 1, 2, 3]),
            "log-probability of token 'A' is None, not a number <= 0",
        ),
        (
            prompt_for("题", "A"),
            reply(["题", "A", " ", "的"], [None, math.nan, -1.0, -1.0], [0, 1, 2, 3]),
            "log-probability of token 'A' is nan",
        ),
        (
            prompt_for("题", "A"),
            reply(["题", "A", " "], [None, 0.5, -1.0], [0, 1, 2]),
            "is 0.5, not a number <= 0",
        ),
        (prompt_for("题", "A"), reply(["题", "A"], [None, -1.0], [0]), "lists differ in length"),
        (prompt_for("题", "A"), reply(["题", "A"], [None, -1.0], [1, 0]), "not a rising position"),
        (prompt_for("题", "A"), reply(["题", "A"], [None, -1.0], [0, "1"]), "not a rising position"),  # type: ignore[list-item]
        (
            prompt_for("题目", "A"),
            reply(["题", "目"], [None, -1.0], [0, 1]),
            "stops before candidate 'A' ends",
        ),
        (
            prompt_for("题目", "A"),
            reply(["token_id:1", "token_id:2", "token_id:3"], [None, -1.0, -1.0], [0, 10, 20]),
            "cannot tell where candidate 'A' ends",
        ),
        (
            prompt_for(
                "题目：", "正确", suffix=""
            ),  # the candidate's last piece and the generated one look alike
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
            "no token_logprobs (only the chat form's `content`)",
        ),
        (reply(["的"], [-1.0], [2], "的"), "it was not echoed"),
        (reply([], [], [], ""), "it was not echoed"),
        (reply(["的", "了"], [-1.0, -1.0], [3, 4], "的了"), "it was not echoed"),
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
        "题\n答案：A\n\n" + FOLLOWING_TEXT + ECHO_SUFFIX,
        "题\n答案：AB\n\n" + FOLLOWING_TEXT + ECHO_SUFFIX,
    ]
    assert [(p.start, p.end) for p in prompts] == [(5, 8), (5, 9)]
    bare = echo_prompts(LoglikRequest("q", "判断：", ("正确", "错误")))
    assert [(p.text, p.end) for p in bare] == [("判断：正确 ", 5), ("判断：错误 ", 5)]


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


# -- after review: what real servers show, and no other prompt's score under any of it -------------------
ALPHABET = "AB正确：题 "


def toy_choice(
    prompt: EchoPrompt, vocab: tuple[str, ...], split: str, style: str, text: bool, generate: bool
) -> dict[str, Any]:
    tokens = toy_echo(prompt.text, vocab, split, style, generate)
    shown = prompt.text + (TOY_GENERATED if generate else "") if text else None
    return reply([t.text for t in tokens], [t.logprob for t in tokens], [t.offset for t in tokens], shown)


@settings(max_examples=400, deadline=None)
@given(
    context=st.text(ALPHABET, min_size=1, max_size=5),
    first=st.text(ALPHABET, min_size=1, max_size=4),
    second=st.text(ALPHABET, min_size=1, max_size=4),
    end=st.sampled_from([None, "", "\n\n"]),
    vocab=st.lists(st.text(ALPHABET, min_size=2, max_size=3), max_size=4),
    split=st.text("正确：题", max_size=2),
    style=st.sampled_from(STYLES),
    text=st.booleans(),
    generate=st.booleans(),
)
def test_another_prompts_echo_never_gives_a_score_but_this_prompts(
    context: str,
    first: str,
    second: str,
    end: str | None,
    vocab: list[str],
    split: str,
    style: str,
    text: bool,
    generate: bool,
) -> None:
    """Q's echo read for P, in any server's style, with or without its text and generated token: refused,
    or (where Q's echo happens to spell P's prompt) P's own score."""
    if first == second:
        return
    sent, other = echo_prompts(LoglikRequest("q", context, (first, second), answer_end=end))
    if sent.text == other.text:
        return
    try:
        score = read_echo(toy_choice(other, tuple(vocab), split, style, text, generate), sent)
    except FinalFailure:
        return
    assert score.logprob == pytest.approx(truth(sent, tuple(vocab), split)[0], abs=1e-9)


def choice_of(tokens: list[str], values: list[float | None], text: str | None) -> dict[str, Any]:
    return reply(tokens, values, list(range(len(tokens))), text)


@pytest.mark.parametrize(
    ("name", "prompt", "tokens", "values", "expected"),
    [
        (  # vLLM: a piece holding a space and a character's first byte, C-Eval's 'A. 鑫'
            "visible text in a piece",
            prompt_for("题\nA. 鑫\n答案：", "A"),
            ["题", "\n", "A", ".", " \ufffd", "\ufffd\ufffd", "\n", "答案", "：", "A", " ", "的"],
            [None, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -0.25, -1.0, -1.0],
            -0.25,
        ),
        (  # vLLM: pieces of a character, then the same character whole
            "pieces take a character",
            prompt_for("正", "正"),
            ["\ufffd", "\ufffd\ufffd", "正", " ", "的"],
            [None, -1.0, -0.5, -3.0, -2.0],
            -0.5,
        ),
        (  # vLLM, a SentencePiece decoder stripping '▁' alone to '': the candidate's last character in pieces
            "a stripped suffix",
            prompt_for("判断：", "正误"),
            ["<s>", "判", "断", "：", "正", "\ufffd", "\ufffd", "\ufffd", "", "A"],
            [None, -1.0, -1.0, -1.0, -0.5, -0.25, -0.125, -0.0625, -3.0, -2.0],
            -0.9375,
        ),
        (  # llama-cpp-python with a SentencePiece GGUF: its dummy prefix before the first word
            "a dummy prefix",
            prompt_for("以下题答案：", "A"),
            [" 以", "下", "题", "答", "案", "：", "A", " ", "B"],
            [None, -1.0, -1.0, -1.0, -1.0, -1.0, -0.5, -1.0, -1.0],
            -0.5,
        ),
    ],
)
def test_what_real_servers_show_is_read(
    name: str, prompt: EchoPrompt, tokens: list[str], values: list[float | None], expected: float
) -> None:
    assert read_echo(choice_of(tokens, values, prompt.text + tokens[-1]), prompt).logprob == expected


def test_a_space_that_may_hide_the_candidates_first_bytes_is_refused() -> None:
    """llama-cpp-python drops partial bytes: ' ' may be ' \\xe6' (the head of 正, joined to the space by a
    byte-level tokenizer) or a space alone; the two give different scores, and the reply cannot say."""
    prompt = prompt_for("答案： ", "正确")
    tokens = ["答", "案", "：", " ", "", "", "", "", "", " ", "的"]
    values: list[float | None] = [None, -1.0, -1.0, -4.0, -0.5, -0.5, -0.5, -0.5, -0.5, -1.0, -1.0]
    with pytest.raises(EchoMismatch, match="holds bytes of candidate '正确''s first character"):
        read_echo(choice_of(tokens, values, prompt.text + "的"), prompt)


def test_a_skipped_space_must_be_vouched_for() -> None:
    """'A题 ''s echo read for 'A 题 ' (candidate ' '): the tokens spell it only by skipping the space."""
    sent = prompt_for("A", " 题")
    tokens, values = ["A", "题", " ", "的"], [None, -1.0, -1.0, -1.0]
    with pytest.raises(EchoMismatch, match="no text"):
        read_echo(choice_of(tokens, values, None), sent)


def test_a_choice_is_its_prompts_when_another_prompt_is_its_text_plus_the_generated_token() -> None:
    """Candidates 'A' and 'A B': A's echo with the generated token 'B ' reads '题：A B ', which also
    begins with 'A B''s prompt; the generated token tells whose it is."""
    own, longer = echo_prompts(LoglikRequest("q", "题：", ("A", "A B")))
    for_own = choice_of(["题", "：", "A", " ", "B "], [None, -1.0, -0.5, -2.0, -0.7], "题：A B ")
    for_longer = choice_of(
        ["题", "：", "A", " ", "B", " ", "的"], [None, -1.0, -0.5, -2.0, -0.7, -1.0, -3.0], "题：A B 的"
    )
    for choices in ([for_own, for_longer], [for_longer, for_own]):
        matched = match_choices(choices, [own, longer])
        assert [read_echo(c, p).logprob for c, p in zip(matched, (own, longer), strict=True)] == [-0.5, -3.2]
