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

from kaoshi.data.model import Gold, Question
from kaoshi.enums import TextEnum
from kaoshi.errors import InputError


class MultiPolicy(TextEnum):
    """How a multiple-choice answer earns points (recorded in the run spec as its value)."""

    EXACT = "exact"
    PARTIAL = "partial"
    F1 = "f1"

    @classmethod
    def parse(cls, value: str) -> MultiPolicy:
        """The policy named `value`; InputError listing the known ones otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise InputError(f"unknown multi policy {value!r} (known: {cls.known()})") from None


# The values, for option choices and messages (plain strings, so argparse shows them as they are).
MULTI_POLICIES: tuple[str, ...] = tuple(policy.value for policy in MultiPolicy)


@dataclass(frozen=True)
class Grade:
    """correct is None when the question cannot be graded here (open questions, no gold answer)."""

    correct: bool | None
    points: float | None


@dataclass(frozen=True)
class GradingPolicy:
    """What a run's answers earn beyond exact equality: the multiple-choice policy and its partial credit."""

    multi: MultiPolicy = MultiPolicy.EXACT
    partial_credit: float = 0.5

    def __post_init__(self) -> None:
        # a policy given by its value ("partial") is the member; an unknown one is refused, never exact
        object.__setattr__(self, "multi", MultiPolicy.parse(self.multi))


UNGRADED = Grade(None, None)


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
    if policy == MultiPolicy.PARTIAL:
        return partial_credit if chosen and chosen < gold else 0.0
    if policy == MultiPolicy.F1:
        hits = len(chosen & gold)
        if not hits:
            return 0.0
        precision, recall = hits / len(chosen), hits / len(gold)
        return 2 * precision * recall / (precision + recall)
    return 0.0
