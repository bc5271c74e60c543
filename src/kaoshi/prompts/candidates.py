"""The answer strings a question admits: what log-likelihood scores and what baselines guess among."""

from __future__ import annotations

from itertools import combinations

from kaoshi.data.model import Question, QuestionType

JUDGE_CANDIDATES = ("正确", "错误")
# 2**6 - 1 = 63 letter sets; beyond that ranking every set is not a sensible log-likelihood method.
MAX_MULTI_OPTIONS = 6


def answer_candidates(question: Question) -> tuple[str, ...]:
    """Single: each letter. Multi: every non-empty letter set, letters in order ('A', 'AB', ...).
    Judge: 正确 / 错误. Open: none."""
    letters = question.letters
    if question.type is QuestionType.SINGLE:
        return letters
    if question.type is QuestionType.MULTI:
        if len(letters) > MAX_MULTI_OPTIONS:
            return ()
        return tuple(
            "".join(combo) for size in range(1, len(letters) + 1) for combo in combinations(letters, size)
        )
    if question.type is QuestionType.JUDGE:
        return JUDGE_CANDIDATES
    return ()


def candidate_answer(question: Question, candidate: str) -> frozenset[str] | bool:
    """The answer a candidate string stands for."""
    if question.type is QuestionType.JUDGE:
        return candidate == JUDGE_CANDIDATES[0]
    return frozenset(candidate)
