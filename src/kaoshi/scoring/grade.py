"""Grading an extracted answer against the gold answer."""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.data.model import Gold, Question, QuestionType


@dataclass(frozen=True)
class Grade:
    """correct is None when the question cannot be graded here (open questions, no gold answer)."""

    correct: bool | None
    points: float | None


def grade_answer(question: Question, answer: Gold) -> Grade:
    """Exact grading: choice answers must equal the gold letter set (the QualBench rule)."""
    if question.type is QuestionType.OPEN or question.answer is None:
        return Grade(None, None)
    correct = answer is not None and answer == question.answer
    return Grade(correct, question.points if correct else 0.0)
