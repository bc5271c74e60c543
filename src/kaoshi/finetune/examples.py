"""Training examples: the evaluation prompt as context and the answer as the only tokens with a loss."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.data.model import Exam, Question
from kaoshi.errors import InputError
from kaoshi.models.chat import render_with_template
from kaoshi.prompts.base import RenderOptions, Template
from kaoshi.qtypes import kind_of

ANSWER_CUE = "答案："
IGNORE = -100  # the label transformers leaves out of the loss


@dataclass(frozen=True)
class TrainingExample:
    question_id: str
    input_ids: list[int]
    labels: list[int]  # IGNORE on the context, the token id on the answer (and explanation)

    @property
    def target_tokens(self) -> int:
        return sum(1 for label in self.labels if label != IGNORE)


def target_text(question: Question, with_explanation: bool) -> str:
    """What the model should write after the cue: the gold answer, optionally with its explanation (as the
    question's type writes it)."""
    return kind_of(question.type).target(question, with_explanation)


def build_examples(
    exam: Exam,
    template: Template,
    tokenizer: Any,
    *,
    chat: bool,
    shots: int,
    with_explanation: bool = False,
    max_length: int = 1024,
) -> list[TrainingExample]:
    """One example per question with a gold answer. The context is exactly what evaluation sends (chat
    template applied); in chat form the assistant turn starts with the template's answer cue, so the loss
    falls on the answer itself. Long contexts are cut from the left; the answer is always kept whole."""
    examples = []
    eos = tokenizer.eos_token_id
    for question in exam.questions:
        if question.answer is None:
            continue
        prompt = template.render(question, exam, RenderOptions(shots, chat))
        context = render_with_template(tokenizer, prompt.text, prompt.messages)
        if chat:
            context += ANSWER_CUE
        context_ids: list[int] = tokenizer(context, add_special_tokens=not chat)["input_ids"]
        target_ids: list[int] = tokenizer(target_text(question, with_explanation), add_special_tokens=False)[
            "input_ids"
        ]
        target_ids = [*target_ids, eos] if eos is not None else target_ids
        room = max_length - len(target_ids)
        if room < 1:
            raise InputError(f"question {question.id}: the answer alone exceeds --max-length {max_length}")
        context_ids = context_ids[-room:]
        examples.append(
            TrainingExample(question.id, context_ids + target_ids, [IGNORE] * len(context_ids) + target_ids)
        )
    return examples


def pad_batch(examples: Sequence[TrainingExample], pad_id: int) -> dict[str, list[list[int]]]:
    """Right-padded input ids, attention mask and labels (padding never counts in the loss)."""
    width = max(len(e.input_ids) for e in examples)
    return {
        "input_ids": [e.input_ids + [pad_id] * (width - len(e.input_ids)) for e in examples],
        "attention_mask": [[1] * len(e.input_ids) + [0] * (width - len(e.input_ids)) for e in examples],
        "labels": [e.labels + [IGNORE] * (width - len(e.labels)) for e in examples],
    }
