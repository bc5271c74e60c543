"""Grading an extracted answer against the gold answer, exam style.

Multiple-choice policies (recorded in the run spec):
- exact: the chosen set must equal the gold set (the QualBench rule);
- partial: the common Chinese exam rule: a non-empty subset of the gold set with no wrong option earns
  `partial_credit` of the points, any wrong option earns nothing;
- f1: per-option F1 between the chosen and the gold set, times the points.
`correct` is always exact equality (accuracy); the policy changes the points earned.

Each question type grades with its own rule (its kind in kaoshi.qtypes); the rules shared by several
types are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from kaoshi.data.model import Gold, Question

MultiPolicy = Literal["exact", "partial", "f1"]
MULTI_POLICIES: tuple[MultiPolicy, ...] = ("exact", "partial", "f1")


@dataclass(frozen=True)
class Grade:
    """correct is None when the question cannot be graded here (open questions, no gold answer)."""

    correct: bool | None
    points: float | None


@dataclass(frozen=True)
class GradingPolicy:
    """What a run's answers earn beyond exact equality: the multiple-choice policy and its partial credit."""

    multi: MultiPolicy = "exact"
    partial_credit: float = 0.5


UNGRADED = Grade(None, None)


def grade_answer(
    question: Question, answer: Gold, policy: MultiPolicy = "exact", partial_credit: float = 0.5
) -> Grade:
    """Grade `answer` the way the question's type grades (ungraded when there is no gold answer)."""
    # Imported here: the kinds are built from this module's rules.
    from kaoshi.qtypes import kind_of

    if question.answer is None:
        return UNGRADED
    return kind_of(question.type).grade(question, answer, GradingPolicy(policy, partial_credit))


def grade_exact(question: Question, answer: Gold, policy: GradingPolicy) -> Grade:
    """All or nothing: the answer must equal the gold answer (single choice, true/false)."""
    correct = answer is not None and answer == question.answer
    return Grade(correct, question.points if correct else 0.0)


def multi_credit(
    chosen: frozenset[str], gold: frozenset[str], policy: MultiPolicy, partial_credit: float
) -> float:
    """The fraction of a multiple-choice question's points that `chosen` earns under `policy`."""
    if chosen == gold:
        return 1.0
    if policy == "partial":
        return partial_credit if chosen and chosen < gold else 0.0
    if policy == "f1":
        hits = len(chosen & gold)
        if not hits:
            return 0.0
        precision, recall = hits / len(chosen), hits / len(gold)
        return 2 * precision * recall / (precision + recall)
    return 0.0
