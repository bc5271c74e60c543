"""A reasoning model's think block is split from its answer (kaoshi.models.reasoning): each row a text as
real reasoning models write it, and the answer kept is always what extraction reads of the whole text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaoshi.models.base import ModelOutput
from kaoshi.models.reasoning import prompt_opens_reasoning, split_reasoning, with_reasoning
from kaoshi.scoring.extract import strip_reasoning

# (text, reasoning, answer text)
SPLITS = [
    pytest.param(
        "<think>\n题目问扑救带电设备火灾。清水导电，不行；二氧化碳不导电。\n</think>\n\n答案：C",
        "题目问扑救带电设备火灾。清水导电，不行；二氧化碳不导电。",
        "\n\n答案：C",
        id="qwen3-chinese",
    ),
    pytest.param(
        "<think>\nOkay, the question asks which extinguisher. Water conducts, so not A.\n</think>\n\n"
        "The answer is C.",
        "Okay, the question asks which extinguisher. Water conducts, so not A.",
        "\n\nThe answer is C.",
        id="english",
    ),
    pytest.param(
        "<think>我先猜答案是A。不对，清水导电，答案：A 是错的，应选C。</think>答案：C",
        "我先猜答案是A。不对，清水导电，答案：A 是错的，应选C。",
        "答案：C",
        id="decoy-answer-in-the-reasoning",
    ),
    pytest.param(
        "嗯，这道题考的是消防知识。答案似乎是B……再想想，应该是C。\n</think>\n\n答案：C",
        "嗯，这道题考的是消防知识。答案似乎是B……再想想，应该是C。",
        "\n\n答案：C",
        id="lone-close-deepseek-r1",
    ),
    pytest.param(
        "<think>\n首先分析选项A：清水会导电，答案可能是",
        "首先分析选项A：清水会导电，答案可能是",
        "",
        id="cut-off-while-thinking",
    ),
    pytest.param(
        "<thinking>The options: A conducts.</thinking>\nAnswer: C",
        "The options: A conducts.",
        "\nAnswer: C",
        id="thinking-tag",
    ),
    pytest.param("<THINK>大写标签</THINK>答案：B", "大写标签", "答案：B", id="upper-case-tags"),
    pytest.param(
        "<think>先想A<think>再想B</think>最后选C</think>\n答案：C",
        "先想A<think>再想B</think>最后选C",
        "\n答案：C",
        id="nested-blocks",
    ),
    pytest.param(
        "<think>第一段思考</think><think>第二段思考</think>答案：D",
        "第一段思考</think><think>第二段思考",
        "答案：D",
        id="two-blocks",
    ),
    pytest.param(
        "<think>第一段</think>答案：D<think>又想了想，还是D",
        "第一段",
        "答案：D",
        id="a-second-block-cut-off",
    ),
    pytest.param("<think>\n\n</think>\n\n答案：A", None, "\n\n答案：A", id="empty-block-thinking-off"),
    pytest.param("</think>\n\n正确", None, "\n\n正确", id="lone-close-nothing-before"),
    pytest.param("答案：C", None, "答案：C", id="no-block"),
    pytest.param("  答案：C\n", None, "  答案：C\n", id="no-block-whitespace-kept"),
    pytest.param("", None, "", id="empty"),
    pytest.param(
        "答案：B。HTML 里 <think>…</think> 标签表示思考。",
        None,
        "答案：B。HTML 里 <think>…</think> 标签表示思考。",
        id="a-block-inside-the-answer-is-left",
    ),
    pytest.param(
        "答案：B，后面写了 <think> 标签", None, "答案：B，后面写了 <think> 标签", id="an-open-tag-inside"
    ),
]


@pytest.mark.parametrize(("text", "reasoning", "answer"), SPLITS)
def test_split_reasoning(text: str, reasoning: str | None, answer: str) -> None:
    assert split_reasoning(text) == (reasoning, answer)
    # What is kept as the answer is what extraction reads of the whole text.
    assert strip_reasoning(answer) == strip_reasoning(text)
    if reasoning is not None or answer != text:
        assert answer == strip_reasoning(text)


# (text after a prompt that opened the block, reasoning, answer text)
OPENED = [
    pytest.param(
        "好的，先看选项。答案应是B。\n</think>\n\n答案：B",
        "好的，先看选项。答案应是B。",
        "\n\n答案：B",
        id="closed",
    ),
    pytest.param("好的，先看选项。答案应是", "好的，先看选项。答案应是", "", id="cut-off-reads-no-answer"),
    pytest.param("<think>模型又开了一次", "模型又开了一次", "", id="opened-twice"),
    pytest.param("\n</think>\n\nC", None, "\n\nC", id="no-thought"),
]


@pytest.mark.parametrize(("text", "reasoning", "answer"), OPENED)
def test_a_prompt_that_opened_the_block(text: str, reasoning: str | None, answer: str) -> None:
    assert split_reasoning(text, opened=True) == (reasoning, answer)


def test_a_prompt_opens_the_block_when_it_ends_with_the_tag() -> None:
    assert prompt_opens_reasoning("<|im_start|>assistant\n<think>\n")
    assert prompt_opens_reasoning("<｜Assistant｜><think>")
    assert not prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # thinking off
    assert not prompt_opens_reasoning("<|im_start|>assistant\n")


def test_with_reasoning_moves_the_block_and_counts_its_tokens() -> None:
    output = ModelOutput("q", text="<think>想一想</think>答案：A", tokens_out=9, truncated=False)
    split = with_reasoning(output, count_tokens=len)
    assert (split.text, split.reasoning, split.reasoning_tokens) == ("答案：A", "想一想", 3)
    assert split.tokens_out == 9
    plain = ModelOutput("q", text="答案：A")
    assert with_reasoning(plain, count_tokens=len) is plain
    assert with_reasoning(ModelOutput("q", error="boom")).text is None
    cut = with_reasoning(ModelOutput("q", text="<think>还在想", truncated=True))
    assert (cut.text, cut.reasoning, cut.reasoning_tokens, cut.truncated) == ("", "还在想", None, True)


_PIECES = st.sampled_from(
    ["<think>", "</think>", "<thinking>", "</THINK>", "答案：", "A", "C", " ", "\n", "想", "不对"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_the_answer_kept_is_what_extraction_reads(text: str) -> None:
    reasoning, answer = split_reasoning(text)
    assert strip_reasoning(answer) == strip_reasoning(text)
    if reasoning is None and answer == text:
        return
    assert answer == strip_reasoning(text)  # split: no tag is left in the answer
