"""Choosing few-shot exemplars."""

from __future__ import annotations

from collections.abc import Sequence

from kaoshi.data.model import Exam, Question


def pick_exemplars(
    question: Question, pool: Sequence[Question], shots: int, *, same_subject_only: bool = False
) -> list[Question]:
    """The first `shots` pool questions of the same type, same subject first; never the question itself."""
    if shots <= 0:
        return []
    same_type = [q for q in pool if q.type is question.type and q.id != question.id and q.has_answer]
    same_subject = [q for q in same_type if q.subject == question.subject]
    if same_subject_only:
        return same_subject[:shots]
    same_domain = [q for q in same_type if q.subject != question.subject and q.domain == question.domain]
    others = [q for q in same_type if q.subject != question.subject and q.domain != question.domain]
    return (same_subject + same_domain + others)[:shots]


def exemplar_pool(exam: Exam, pinned: Sequence[str] = ()) -> Sequence[Question]:
    """Pinned ids when given (from the dev split or the exam); else the dev split when the exam has one;
    otherwise (QualBench has a single split) the exam itself."""
    if pinned:
        return [exam.question(question_id) for question_id in pinned]
    return exam.fewshot or exam.questions
