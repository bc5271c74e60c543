"""Choosing few-shot exemplars."""

from __future__ import annotations

from collections.abc import Sequence

from kaoshi.data.model import Exam, Question, format_gold


def pick_exemplars(
    question: Question, pool: Sequence[Question], shots: int, *, same_subject_only: bool = False
) -> list[Question]:
    """The first `shots` pool questions of the same type: same subject first, then same domain, then any;
    never the question itself (the same id in another split is another question: C-Eval numbers dev and
    val from 0 alike). One pass that stops as soon as enough same-subject exemplars are found, since the
    pool may be a whole 17k-question exam."""
    if shots <= 0:
        return []
    itself = (question.id, question.split)
    ranked: tuple[list[Question], list[Question], list[Question]] = ([], [], [])
    for candidate in pool:
        if candidate.type is not question.type or not candidate.has_answer:
            continue
        if (candidate.id, candidate.split) == itself:
            continue
        if candidate.subject == question.subject:
            rank = 0
        elif same_subject_only:
            continue
        else:
            rank = 1 if candidate.domain == question.domain else 2
        if len(ranked[rank]) < shots:
            ranked[rank].append(candidate)
            if rank == 0 and len(ranked[0]) == shots:
                break
    return (ranked[0] + ranked[1] + ranked[2])[:shots]


def exemplar_pool(exam: Exam, pinned: Sequence[str] = ()) -> Sequence[Question]:
    """Pinned ids when given (from the dev split or the exam); else the dev split when the exam has one;
    otherwise (QualBench has a single split) the exam itself."""
    if pinned:
        return [exam.question(question_id) for question_id in pinned]
    return exam.fewshot or exam.questions


def stored_answer(exemplar: Question) -> str:
    """An exemplar's answer as the data file writes it (official prompts copy it), else as kaoshi does."""
    return exemplar.verbatim_field("answer") or format_gold(exemplar.answer)


def stored_explanation(exemplar: Question) -> str:
    """An exemplar's explanation exactly as the data file has it, else the parsed one."""
    explanation = exemplar.verbatim_field("explanation")
    return exemplar.explanation if explanation is None else explanation
