"""Which of an exam's questions a run asks: every one, one shard's (--shard I/N), or a stratified random
sample's (--sample N, kaoshi.data.subsets). The run renders its prompts from the whole exam either way
(exemplars, a template's demos), so that an asked question gets the prompt a full run gives it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from kaoshi.data.model import Exam, Question
from kaoshi.data.subsets import Subset, draw_sample
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of
from kaoshi.runner.shards import in_shard
from kaoshi.store.records import RunSpec


def counted(question: Question) -> bool:
    """Whether an accuracy counts the question: objective, with a gold answer."""
    return kind_of(question.type.value).objective and question.answer is not None


def drawn_digest(questions: tuple[Question, ...]) -> str:
    """What identifies the questions a sample drew (their ids), kept in the run's spec."""
    text = "\n".join(sorted(question.id for question in questions))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def sample_record(exam: Exam, size: int, seed: int) -> dict[str, Any]:
    """How `size` questions of the exam are drawn with `seed` (RunSpec.sample): the Subset, and the drawn
    questions' digest, by which a resumed run checks it asks the same ones."""
    drawn, subset = draw_sample(exam.questions, size, seed, counted)
    return {**subset.to_json(), "drawn": drawn_digest(drawn)}


def sampled_ids(exam: Exam, sample: dict[str, Any]) -> frozenset[str]:
    """The ids a run's sample drew from the exam, drawn again as recorded; InputError when the draw gives
    other questions than the run's (its exam or kaoshi's drawing changed)."""
    subset = Subset.from_json(sample)
    drawn, _ = draw_sample(exam.questions, subset.size, subset.seed, counted)
    if drawn_digest(drawn) != sample.get("drawn"):
        raise InputError(
            f"the sample of {subset.size} questions drawn with seed {subset.seed} is not the one this run "
            "asked (the exam, or how kaoshi draws a sample, changed since): start a new run"
        )
    return frozenset(question.id for question in drawn)


def asked_by(spec: RunSpec, exam: Exam) -> Callable[[str], bool]:
    """Whether the run asks a question (by id): its shard's and its sample's."""
    in_part = in_shard(spec.shard)
    if spec.sample is None:
        return in_part
    ids = sampled_ids(exam, spec.sample)
    return lambda question_id: question_id in ids and in_part(question_id)
