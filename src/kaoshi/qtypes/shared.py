"""Behaviour several question types share: letter-set answers, the answer-then-explanation target and the
patterns that read replies, compiled on first use."""

from __future__ import annotations

import re
from functools import cache

from kaoshi.data.model import Question, format_gold

# What follows the answer in a solved question (QualBench's '答案：…\n解析：…').
EXPLANATION_LEAD = "\n解析："


def option_letters(question: Question) -> tuple[str, ...]:
    """Each option letter, in order."""
    return question.letters


def letter_set(question: Question, candidate: str) -> frozenset[str]:
    """The letters a candidate such as 'AC' names."""
    return frozenset(candidate)


def answer_then_explanation(question: Question, with_explanation: bool) -> str:
    """The gold answer, optionally followed by its explanation (when the question has one)."""
    answer = format_gold(question.answer)
    if with_explanation and question.explanation.strip():
        answer += f"{EXPLANATION_LEAD}{question.explanation.strip()}"
    return answer


@cache
def compiled(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled, once: a type's larger patterns for reading a reply are kept as sources and
    compiled where a reply is read (compiled as their modules were imported, they took 2 ms of every
    command's start, a report's too, which reads none)."""
    return re.compile(pattern)
