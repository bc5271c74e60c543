"""Helpers for comparing kaoshi's prompts with what official code builds: stand-in modules for what that code
imports but the comparison never uses (API clients), a chat client that records what it is sent, and a
comparison that reports the first differences."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any


class ChatReply(dict[str, Any]):
    """openai's old ChatCompletion reply, read by key (`reply['choices'][0]['message']['content']`) or by
    attribute (`reply.choices[0].message['content']`), as official scripts do one or the other."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class RecordingChat:
    """openai.ChatCompletion as official code calls it: records each message list sent, replies 'A'."""

    def __init__(self) -> None:
        self.sent: list[list[dict[str, str]]] = []

    def create(self, model: str, messages: list[dict[str, str]], **kwargs: Any) -> ChatReply:
        self.sent.append(copy.deepcopy(messages))
        return ChatReply(choices=[ChatReply(message={"role": "assistant", "content": "A"})])

    def openai_module(self) -> ModuleType:
        """A stand-in `openai` module whose ChatCompletion is this recorder."""
        module = ModuleType("openai")
        module.ChatCompletion = self  # type: ignore[attr-defined]
        return module


@contextmanager
def stand_ins(**modules: ModuleType) -> Iterator[None]:
    """Modules in sys.modules for the length of a block, whatever was there put back after."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def first_differences(pairs: Iterable[tuple[str, object, object]]) -> tuple[int, list[str]]:
    """How many (id, expected, got) triples were compared, and the first three that differ."""
    compared, differing = 0, list[str]()
    for question_id, expected, got in pairs:
        compared += 1
        if expected != got and len(differing) < 3:
            differing.append(f"{question_id}:\nexpected {expected!r}\n     got {got!r}")
    return compared, differing


def as_dicts(messages: Iterable[tuple[str, str]] | None) -> list[dict[str, str]]:
    """kaoshi's (role, content) messages in the OpenAI shape official code sends."""
    return [{"role": role, "content": content} for role, content in messages or ()]
