"""The answer strings a question admits: what log-likelihood scores and what baselines guess among."""

from __future__ import annotations

from kaoshi.data.model import Gold, Question
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of


def answer_candidates(question: Question) -> tuple[str, ...]:
    """The strings its type ranks (single: each letter; multi: every letter set; judge: 正确 / 错误); none
    for a type whose answers are generated (open)."""
    ranking = kind_of(question.type).ranking
    return () if ranking is None else ranking.candidates(question)


def candidate_answer(question: Question, candidate: str) -> Gold:
    """The answer a candidate string stands for."""
    ranking = kind_of(question.type).ranking
    if ranking is None:
        raise InputError(f"{question.type.value} questions have no candidate answers")
    return ranking.answer_of(question, candidate)
