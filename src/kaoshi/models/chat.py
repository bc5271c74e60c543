"""Chat messages as backends send them."""

from __future__ import annotations

from typing import Any

from kaoshi.models.base import Message


def as_dicts(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """(role, content) pairs as the {"role", "content"} objects chat APIs and templates take."""
    return [{"role": role, "content": content} for role, content in messages]


def render_with_template(tokenizer: Any, prompt: str, messages: tuple[Message, ...] | None) -> str:
    """The exact text a local model reads: its tokenizer's chat template applied to the messages, with the
    assistant turn opened; or the plain prompt for completion-form requests."""
    if messages is None:
        return prompt
    rendered: str = tokenizer.apply_chat_template(
        as_dicts(messages), tokenize=False, add_generation_prompt=True
    )
    return rendered
