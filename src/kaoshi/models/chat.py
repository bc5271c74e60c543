"""Chat messages as backends send them."""

from __future__ import annotations

from typing import Any

from kaoshi.models.base import Message


def as_dicts(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """(role, content) pairs as the {"role", "content"} objects chat APIs and templates take."""
    return [{"role": role, "content": content} for role, content in messages]


def render_with_template(
    tokenizer: Any, prompt: str, messages: tuple[Message, ...] | None, *, thinking: bool | None = None
) -> str:
    """The exact text a local model reads: its tokenizer's chat template applied to the messages, with the
    assistant turn opened; or the plain prompt for completion-form requests. `thinking` is the template's
    `enable_thinking` (Qwen3 and others), passed only when set, so that a template that does not know it
    renders as it always did."""
    if messages is None:
        return prompt
    switch = {} if thinking is None else {"enable_thinking": thinking}
    rendered: str = tokenizer.apply_chat_template(
        as_dicts(messages), tokenize=False, add_generation_prompt=True, **switch
    )
    return rendered


# A stand-in answer, found again in the rendered conversation to see what the template writes after it.
_ANSWER_PROBE = "KAOSHI-ANSWER-PROBE"


def assistant_turn_end(tokenizer: Any) -> str:
    """What the chat template writes after an assistant answer ('<|im_end|>', '<|eot_id|>', ...) without the
    whitespace between turns; the EOS token where the template writes nothing after it."""
    probe = as_dicts((("user", "?"), ("assistant", _ANSWER_PROBE)))
    rendered = str(tokenizer.apply_chat_template(probe, tokenize=False))
    _, found, after = rendered.partition(_ANSWER_PROBE)
    end = after.rstrip() if found else ""
    return end or str(tokenizer.eos_token or "")
