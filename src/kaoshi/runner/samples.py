"""Turn one model output into a scored sample record."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from kaoshi.data.model import Gold, Question
from kaoshi.models.base import ModelOutput
from kaoshi.prompts import Prompt, candidate_answer
from kaoshi.scoring.extract import Extraction, extract_answer
from kaoshi.scoring.grade import MULTI_POLICIES, Grade, grade_answer
from kaoshi.store.records import Method, RunSpec, SampleRecord, SampleStatus, run_method


@dataclass(frozen=True)
class PendingQuestion:
    question: Question
    position: int
    prompt: Prompt


def build_sample(pending: PendingQuestion, output: ModelOutput, spec: RunSpec) -> SampleRecord:
    question = pending.question
    bad_logprobs = logprob_error(output.logprobs)
    error = output.error if output.error is not None else bad_logprobs
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
        # NaN or infinity would make the stored JSON invalid for other readers; the error names the value.
        logprobs=None if bad_logprobs else output.logprobs,
        latency_s=output.latency_s,
        tokens_in=output.tokens_in,
        tokens_out=output.tokens_out,
        error=error,
    )
    if error is not None:
        return record
    echo = pending.prompt.text if pending.prompt.messages is None else None
    return score_record(record, question, output, spec, echo)


def logprob_error(scores: Mapping[str, object] | None) -> str | None:
    """Why a backend's candidate log-probabilities cannot be ranked (one is not a finite number <= 0:
    NaN would win or lose at random, a positive value is impossible), or None when they can."""
    for candidate, value in (scores or {}).items():
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value > 0
        ):
            return f"the log-probability of candidate {candidate!r} is {value!r}, not a finite number <= 0"
    return None


def score_record(
    record: SampleRecord, question: Question, output: ModelOutput, spec: RunSpec, echo: str | None
) -> SampleRecord:
    """Extraction and grading of one output under the run's method and scoring policy."""
    method = run_method(spec)
    extraction = read_output(question, output, method, echo)
    answered = SampleStatus(extraction.status) is SampleStatus.OK
    grade = grade_for(question, extraction.answer if answered else None, spec)
    by_loglik = method is Method.LOGLIK and question.type.is_objective
    return replace(
        record,
        status=extraction.status,
        answer=extraction.answer,
        correct=grade.correct,
        score=grade.points,
        extracted_by="loglik" if by_loglik else "rules",
    )


def grade_for(question: Question, answer: Gold, spec: RunSpec) -> Grade:
    policy = spec.multi_policy if spec.multi_policy in MULTI_POLICIES else "exact"
    return grade_answer(question, answer, policy, spec.partial_credit)


def _read_text(question: Question, output: ModelOutput, prompt: str | None) -> Extraction:
    return extract_answer(question, output.text or "", prompt)


def _read_loglik(question: Question, output: ModelOutput, prompt: str | None) -> Extraction:
    if not question.type.is_objective:  # open questions are generated even in a loglik run
        return _read_text(question, output, prompt)
    scores = output.logprobs
    if not scores:
        return Extraction(None, "unparsed")
    best = max(scores, key=lambda candidate: scores[candidate])
    return Extraction(candidate_answer(question, best), "ok")


# How each method's model output is read. A vote has no model output: its answers come from other runs
# (kaoshi rescore re-grades them, runner/rescore.py).
_READERS: dict[Method, Callable[[Question, ModelOutput, str | None], Extraction]] = {
    Method.GENERATE: _read_text,
    Method.LOGLIK: _read_loglik,
}


def read_output(
    question: Question, output: ModelOutput, method: Method | str, prompt: str | None = None
) -> Extraction:
    """The answer a model output gives: the most likely candidate (loglik) or the text's answer
    (`prompt`, for completion prompts, is removed when the model echoes it)."""
    reader = _READERS.get(Method(method))
    if reader is None:
        raise ValueError(f"a {Method(method).value} run has no model output to read answers from")
    return reader(question, output, prompt)
