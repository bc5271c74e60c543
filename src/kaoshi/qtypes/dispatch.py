"""What differs per question type, asked of the question's kind: reading a gold answer from a file, an
answer from a model's reply, and grading it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.data.model import Gold, Question, QuestionType
from kaoshi.qtypes.registry import kind_of
from kaoshi.scoring.grade import UNGRADED, Grade, GradingPolicy, MultiPolicy

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction


def parse_letters(value: object, qtype: QuestionType) -> frozenset[str]:
    """The gold letters of a choice question, parsed as its type parses a gold answer."""
    gold = kind_of(qtype).parse_gold(value)
    if not isinstance(gold, frozenset):
        raise TypeError(f"{qtype.value} answers are not option letters")
    return gold


def extract_answer(question: Question, text: str, prompt: str | None = None) -> Extraction:
    """Read the answer of `question` from a model's reply the way its type reads one (`prompt`, when
    given, is stripped if echoed)."""
    return kind_of(question.type).extract(question, text, prompt)


def grade_answer(
    question: Question,
    answer: Gold,
    policy: MultiPolicy | str = MultiPolicy.EXACT,
    partial_credit: float = 0.5,
) -> Grade:
    """Grade `answer` the way the question's type grades (ungraded when there is no gold answer)."""
    if question.answer is None:
        return UNGRADED
    grading = GradingPolicy(MultiPolicy.parse(policy), partial_credit)  # policy: a member or its value
    return kind_of(question.type).grade(question, answer, grading)
