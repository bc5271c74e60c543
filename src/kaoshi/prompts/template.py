"""Prompt templates: named, versioned values that render a question (plus few-shot exemplars) to text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kaoshi.data.model import Exam, Question, QuestionType, format_gold

_INSTRUCTIONS = {
    QuestionType.SINGLE: "以下是单项选择题，请选出唯一正确的选项。",
    QuestionType.MULTI: "以下是多项选择题，请选出所有正确的选项。",
    QuestionType.JUDGE: "以下是判断题，请判断下列说法是否正确，回答“正确”或“错误”。",
    QuestionType.OPEN: "以下是主观题，请给出完整的回答。",
}


@dataclass(frozen=True)
class Prompt:
    text: str
    shots: int  # exemplars actually used


@dataclass(frozen=True)
class PlainTemplate:
    """kaoshi's plain template: instruction, k solved exemplars of the same type, the question, '答案：'."""

    name: str = "default"
    version: int = 1

    def render(self, question: Question, exam: Exam, shots: int) -> Prompt:
        exemplars = pick_exemplars(question, exam.fewshot, shots)
        parts = [_INSTRUCTIONS[question.type]]
        for exemplar in exemplars:
            parts.append(f"{format_body(exemplar)}\n答案：{format_gold(exemplar.answer)}")
        parts.append(f"{format_body(question)}\n答案：")
        return Prompt("\n\n".join(parts), len(exemplars))


def format_body(question: Question) -> str:
    lines = [question.stem]
    lines.extend(f"{letter}. {text}" for letter, text in question.options)
    return "\n".join(lines)


def pick_exemplars(question: Question, pool: Sequence[Question], shots: int) -> list[Question]:
    """The first `shots` pool questions of the same type, preferring the same subject; never the question."""
    if shots <= 0:
        return []
    same_type = [q for q in pool if q.type is question.type and q.id != question.id and q.has_answer]
    same_subject = [q for q in same_type if q.subject == question.subject]
    others = [q for q in same_type if q.subject != question.subject]
    return (same_subject + others)[:shots]


TEMPLATES: dict[str, PlainTemplate] = {"default": PlainTemplate()}


def get_template(name: str) -> PlainTemplate:
    try:
        return TEMPLATES[name]
    except KeyError:
        raise KeyError(f"unknown prompt {name!r} (known: {', '.join(sorted(TEMPLATES))})") from None
