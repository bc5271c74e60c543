"""What a template produces: completion text or chat messages, and how many exemplars it used."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of

Message = tuple[str, str]  # (role, content): role is system / user / assistant


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt. Completion form has `text`; chat form has `messages` (and `text` is their JSON,
    which is what the store keeps)."""

    text: str
    shots: int
    messages: tuple[Message, ...] | None = None

    @classmethod
    def chat(cls, messages: Sequence[Message], shots: int) -> Prompt:
        as_json = json.dumps([{"role": r, "content": c} for r, c in messages], ensure_ascii=False)
        return cls(as_json, shots, tuple(messages))

    @classmethod
    def from_stored(cls, text: str, chat: bool, shots: int = 0) -> Prompt:
        """The prompt as the store keeps it: completion text, or (chat runs) the messages as JSON."""
        if not chat:
            return cls(text, shots)
        return cls(text, shots, tuple((m["role"], m["content"]) for m in json.loads(text)))

    def payload(self) -> dict[str, object]:
        """What a backend is sent: the completion text, or the chat messages in the OpenAI shape."""
        if self.messages is None:
            return {"text": self.text}
        return {"messages": [{"role": role, "content": content} for role, content in self.messages]}

    def display(self) -> str:
        """Human-readable form for `kaoshi prompt show`."""
        if self.messages is None:
            return self.text
        return "\n\n".join(f"[{role}]\n{content}" for role, content in self.messages)


@dataclass(frozen=True)
class RenderOptions:
    shots: int
    chat: bool = False
    system: str | None = None
    exemplar_ids: tuple[str, ...] = ()  # pinned exemplars; empty: chosen from the pool


@dataclass(frozen=True)
class GenerationBudget:
    """How many new tokens a generated answer may use under a protocol. Objective answers (a letter set, a
    verdict, a short reason) get `objective`; open answers `open`."""

    objective: int = 128
    open: int = 512

    def for_type(self, qtype: QuestionType) -> int:
        return self.objective if kind_of(qtype).objective else self.open

    def describe(self) -> str:
        return f"{self.objective} objective / {self.open} open"

    def resolved(self, max_new_tokens: int | None, max_new_tokens_open: int | None) -> tuple[int, int]:
        """(objective, open) new tokens for a run: `max_new_tokens` for every answer and
        `max_new_tokens_open` for open ones where given, else this protocol's budget."""
        for name, value in (("max_new_tokens", max_new_tokens), ("max_new_tokens_open", max_new_tokens_open)):
            if value is not None and value <= 0:
                raise InputError(f"--{name.replace('_', '-')} must be > 0, got {value}")
        objective = max_new_tokens or self.objective
        return objective, max_new_tokens_open or max_new_tokens or self.open


DEFAULT_BUDGET = GenerationBudget()
# QualBench's authors generate 50 new tokens (greedy decoding); open answers (LHMKE) take paragraphs.
EXAM_BUDGET = GenerationBudget(objective=50, open=512)


# A predicate the backend supplies: does this prompt fit the model's context window?
Fits = Callable[[Prompt], bool]


class Template(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def default_shots(self) -> int: ...
    @property
    def budget(self) -> GenerationBudget:
        """The protocol's generation budget (`kaoshi run --max-new-tokens` overrides it)."""
        ...

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt: ...

    def answer_end(self, chat: bool) -> str | None:
        """The text that follows an answer in this template's own format (what its exemplars write after
        the answer). Log-likelihood scores it with every candidate, so a letter set never loses to its own
        prefix ('AB' against 'ABCD'). None: the answer ends the assistant turn (chat)."""
        ...


def render_fitting(
    template: Template, question: Question, exam: Exam, options: RenderOptions, fits: Fits
) -> Prompt:
    """Render with the requested shots, dropping exemplars until the prompt fits: the last one at a time,
    or as a template with its own protocol rule (`render_within`, CMMLU's) drops them."""
    render_within = getattr(template, "render_within", None)
    if render_within is not None:
        fitted: Prompt = render_within(question, exam, options, fits)
        return fitted
    shots = options.shots
    while True:
        prompt = template.render(question, exam, replace(options, shots=shots))
        if shots <= 0 or fits(prompt):
            return prompt
        shots = min(shots, prompt.shots) - 1


def with_system(system: str | None, instruction: str) -> str:
    """A user system prompt goes before the template's own instruction."""
    return f"{system}\n{instruction}" if system else instruction


def one_message(text: str, options: RenderOptions) -> Prompt:
    """A zero-shot protocol that sends its whole prompt as one user message (chat) or as the completion
    text; a user system prompt is a system message, or the first line."""
    if not options.chat:
        return Prompt(with_system(options.system, text), 0)
    messages: list[Message] = [("system", options.system)] if options.system else []
    messages.append(("user", text))
    return Prompt.chat(messages, 0)
