"""Turn one model output into a scored sample record."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kaoshi.data.model import Gold, Question
from kaoshi.models.base import ModelOutput
from kaoshi.prompts import Prompt, candidate_answer
from kaoshi.scoring.extract import Extraction, extract_answer
from kaoshi.scoring.grade import MULTI_POLICIES, Grade, grade_answer
from kaoshi.store.records import RunSpec, SampleRecord


@dataclass(frozen=True)
class PendingQuestion:
    question: Question
    position: int
    prompt: Prompt


def build_sample(pending: PendingQuestion, output: ModelOutput, spec: RunSpec) -> SampleRecord:
    question = pending.question
    record = SampleRecord(
        question_id=question.id,
        position=pending.position,
        qtype=question.type.value,
        gold=question.answer,
        points=question.points,
        subject=question.subject,
        domain=question.domain,
        category=question.category,
        question=question.content(),
        prompt=pending.prompt.text,
        shots=pending.prompt.shots,
        status="error",
        response=output.text,
        logprobs=output.logprobs,
        latency_s=output.latency_s,
        tokens_in=output.tokens_in,
        tokens_out=output.tokens_out,
        error=output.error,
    )
    if output.error is not None:
        return record
    echo = pending.prompt.text if pending.prompt.messages is None else None
    return score_record(record, question, output, spec, echo)


def score_record(
    record: SampleRecord, question: Question, output: ModelOutput, spec: RunSpec, echo: str | None
) -> SampleRecord:
    """Extraction and grading of one output under the run's method and scoring policy."""
    method = spec.method
    extraction = read_output(question, output, method, echo)
    grade = grade_for(question, extraction.answer if extraction.status == "ok" else None, spec)
    extracted_by = "loglik" if method == "loglik" and question.type.is_objective else "rules"
    return replace(
        record,
        status=extraction.status,
        answer=extraction.answer,
        correct=grade.correct,
        score=grade.points,
        extracted_by=extracted_by,
    )


def grade_for(question: Question, answer: Gold, spec: RunSpec) -> Grade:
    policy = spec.multi_policy if spec.multi_policy in MULTI_POLICIES else "exact"
    return grade_answer(question, answer, policy, spec.partial_credit)


def read_output(
    question: Question, output: ModelOutput, method: str, prompt: str | None = None
) -> Extraction:
    """The answer a model output gives: the most likely candidate (loglik) or the text's answer
    (`prompt`, for completion prompts, is removed when the model echoes it)."""
    if method == "loglik" and question.type.is_objective:
        scores = output.logprobs
        if not scores:
            return Extraction(None, "unparsed")
        best = max(scores, key=lambda candidate: scores[candidate])
        return Extraction(candidate_answer(question, best), "ok")
    return extract_answer(question, output.text or "", prompt)
