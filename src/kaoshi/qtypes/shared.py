"""Behaviour several question types share: letter-set answers and the answer-then-explanation target."""

from __future__ import annotations

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
