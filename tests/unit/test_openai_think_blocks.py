"""A server that sends a reasoning model's think block in the answer text itself (no reasoning parser, a
/completions reply) has the block kept apart as the reply's reasoning, as one that sends
`reasoning_content` beside the answer; and the reasoning tokens a server counts are read from its usage."""

from __future__ import annotations

from typing import Any

import pytest

from kaoshi.models.openai_replies import FinalFailure, ReplyParts, reasoning_tokens, reply_parts

THOUGHT = "先看A：清水导电，答案不是A。二氧化碳不导电。"


def chat(content: str | None, finish: str = "stop", **message: Any) -> dict[str, Any]:
    return {"message": {"content": content, **message}, "finish_reason": finish}


@pytest.mark.parametrize(
    ("choice", "parts"),
    [
        pytest.param(
            chat(f"<think>\n{THOUGHT}\n</think>\n\n答案：C"),
            ReplyParts("\n\n答案：C", THOUGHT, cut_off=False),
            id="think-block-in-content",
        ),
        pytest.param(
            chat(f"{THOUGHT}\n</think>\n\n答案：C"),
            ReplyParts("\n\n答案：C", THOUGHT, cut_off=False),
            id="template-opened-the-block",
        ),
        pytest.param(
            {"text": f"<think>{THOUGHT}</think>The answer is C.", "finish_reason": "stop"},
            ReplyParts("The answer is C.", THOUGHT, cut_off=False),
            id="completions-text",
        ),
        pytest.param(
            chat(f"<think>\n{THOUGHT}", finish="length"),
            ReplyParts("", THOUGHT, cut_off=True),
            id="cut-off-while-thinking",
        ),
        pytest.param(
            chat("<think>内容里的块</think>答案：B", reasoning_content="服务器分开的推理"),
            ReplyParts("<think>内容里的块</think>答案：B", "服务器分开的推理", cut_off=False),
            id="a-reasoning-field-wins",  # as before: the text is left to extraction
        ),
        pytest.param(chat("答案：C"), ReplyParts("答案：C", None, cut_off=False), id="no-block"),
    ],
)
def test_reply_parts_split_a_think_block_from_the_text(choice: dict[str, Any], parts: ReplyParts) -> None:
    assert reply_parts(choice, 10_000) == parts


def test_a_reply_that_only_thought_is_an_empty_answer_graded_wrong_not_an_error() -> None:
    # an error would leave the question out of the accuracy, raising it (the model failed the question)
    parts = reply_parts(chat(f"<think>{THOUGHT}</think>\n"), 10_000)
    assert parts == ReplyParts("\n", THOUGHT, cut_off=False)


def test_a_reply_with_nothing_at_all_is_still_an_error() -> None:
    with pytest.raises(FinalFailure, match=r"^empty completion \(finish_reason=stop\)"):
        reply_parts(chat("  "), 10_000)


def test_the_reasoning_is_kept_to_the_reply_limit() -> None:
    parts = reply_parts(chat(f"<think>{'想' * 50}</think>答案：A"), 20)
    assert parts.reasoning == "想" * 20 and parts.text == "答案：A"


@pytest.mark.parametrize(
    ("usage", "count"),
    [
        ({"completion_tokens": 900, "completion_tokens_details": {"reasoning_tokens": 640}}, 640),
        ({"completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 0}}, 0),
        ({"completion_tokens": 9}, None),
        ({"completion_tokens_details": None}, None),
        ({"completion_tokens_details": {"reasoning_tokens": "640"}}, None),
        ({"completion_tokens_details": {"reasoning_tokens": -1}}, None),
        ({"completion_tokens_details": {"reasoning_tokens": True}}, None),
        ("mangled", None),
    ],
)
def test_reasoning_tokens_are_read_from_usage(usage: object, count: int | None) -> None:
    assert reasoning_tokens({"usage": usage}) == count
    assert reasoning_tokens({}) is None
