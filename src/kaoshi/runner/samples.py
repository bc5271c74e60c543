"""Turn one model output into a scored sample record."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kaoshi.data.model import Gold, Question
from kaoshi.errors import InputError
from kaoshi.models.base import ModelOutput, request_id
from kaoshi.prompts import Prompt
from kaoshi.qtypes import extract_answer, grade_answer, kind_of
from kaoshi.runner.repeats import sampling_of
from kaoshi.scoring.extract import Extraction
from kaoshi.scoring.grade import Grade
from kaoshi.store.records import Method, RunSpec, SampleRecord, SampleStatus, run_method


def new_tokens(spec: RunSpec, qtype: str) -> int:
    """The generation budget of a question of this type in a run: the open budget for a judged (open)
    type (kaoshi.qtypes says which), else the run's."""
    if not kind_of(qtype).objective and spec.max_new_tokens_open is not None:
        return spec.max_new_tokens_open
    return spec.max_new_tokens


@dataclass(frozen=True)
class PendingQuestion:
    question: Question
    position: int
    prompt: Prompt
    sample: int = 0  # which of the question's samples is asked (kaoshi run --repeats)

    @property
    def request_id(self) -> str:
        """The id of this sample's request (and of its claim): unique per (question, sample)."""
        return request_id(self.question.id, self.sample)

    @property
    def key(self) -> tuple[str, int]:
        return self.question.id, self.sample


def request_key(pending: PendingQuestion, spec: RunSpec) -> int | None:
    """The key of the request a generated answer is asked with: what the backend is sent (model, backend
    settings, chat or not, prompt or messages, budget, decoding and seed) and the sample index, as the
    first 64 bits of their SHA-256, a signed integer: the cheapest key for the index that finds it (every
    sample a run stores writes one); an answer found is checked to have this request's prompt, so a
    collision is a miss, never another question's answer. None for an answer ranked by log-likelihood
    (not cached)."""
    question = pending.question
    if ranked(question, spec.method):
        return None
    sampling = sampling_of(spec, question.id, pending.sample)
    digest = hashlib.sha256(_run_request_part(spec))
    digest.update(pending.prompt.text.encode())
    budget = new_tokens(spec, question.type.value)
    digest.update(f"\x00{budget}\x00{sampling.seed}\x00{pending.sample}".encode())
    return int.from_bytes(digest.digest()[:8], "big", signed=True)


_RUN_PARTS: dict[int, tuple[RunSpec, bytes]] = {}


def _run_request_part(spec: RunSpec) -> bytes:
    """What every request of a run shares (model, backend settings, chat, decoding), as bytes; kept for
    the few specs a process runs (a run's answers all share one)."""
    kept = _RUN_PARTS.get(id(spec))
    if kept is not None and kept[0] is spec:
        return kept[1]
    # the endpoints are left out (another URL serving the same model answers the same, as --reuse-from
    # takes it); the LLM extractor and a LoRA adapter are in (they change what an answer reads as)
    settings = {k: v for k, v in spec.model_settings.items() if k != "base_url"}
    shared = [spec.model, settings, spec.chat, spec.temperature, spec.top_p, spec.top_k, spec.thinking,
              spec.llm_extractor, spec.adapter]  # fmt: skip
    part = json.dumps(shared, ensure_ascii=False, sort_keys=True, default=str).encode() + b"\x00"
    if len(_RUN_PARTS) > 16:
        _RUN_PARTS.clear()
    _RUN_PARTS[id(spec)] = (spec, part)
    return part


def build_sample(pending: PendingQuestion, output: ModelOutput, spec: RunSpec) -> SampleRecord:
    question = pending.question
    bad_logprobs = logprob_error(output.logprobs)
    error = output.error if output.error is not None else bad_logprobs
    # scored as it is made: a record made once, not made and then replaced (a run makes one an answer)
    if error is not None:
        scored: dict[str, Any] = {"status": SampleStatus.ERROR}
    else:
        scored = _scored_fields(question, output, spec, _echo(pending))
    return SampleRecord(
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
        response=output.text,
        # NaN or infinity would make the stored JSON invalid for other readers; the error names the value.
        logprobs=None if bad_logprobs else output.logprobs,
        latency_s=output.latency_s,
        tokens_in=output.tokens_in,
        tokens_out=output.tokens_out,
        error=error,
        truncated=output.truncated,
        served_model=output.served_model,
        reasoning=output.reasoning,  # kept to be shown: extraction reads output.text alone
        tokens_reasoning=output.reasoning_tokens,
        tokens_cached=output.cached_tokens,
        request_key=None if error is not None else request_key(pending, spec),
        batch_id=output.batch_id,
        sample=pending.sample,
        **scored,
    )


def _echo(pending: PendingQuestion) -> str | None:
    """What a model may echo before its answer: a completion prompt (a chat's messages are not echoed)."""
    return pending.prompt.text if pending.prompt.messages is None else None


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
    return replace(record, **_scored_fields(question, output, spec, echo))


def _scored_fields(
    question: Question, output: ModelOutput, spec: RunSpec, echo: str | None
) -> dict[str, Any]:
    """The fields of a sample that score_record sets."""
    reading = read_output(question, output, run_method(spec), echo)
    extraction = reading.extraction
    status = SampleStatus(extraction.status)
    grade = grade_for(question, extraction.answer if status is SampleStatus.OK else None, spec)
    return {
        "status": status,
        "answer": extraction.answer,
        "correct": grade.correct,
        "score": grade.points,
        "extracted_by": reading.extracted_by,
    }


def grade_for(question: Question, answer: Gold, spec: RunSpec) -> Grade:
    """The grade of `answer` under the run's multiple-choice policy (a spec holds a known one: an unknown
    stored policy is refused when the run is read)."""
    return grade_answer(question, answer, spec.multi_policy, spec.partial_credit)


@dataclass(frozen=True)
class Reading:
    """The answer read from a model output, and what read it (the sample's `extracted_by`)."""

    extraction: Extraction
    extracted_by: str  # rules / loglik


def _never(question: Question) -> bool:
    return False


def _has_ranking(question: Question) -> bool:
    # Types without candidates (open questions) are generated even in a loglik run.
    return kind_of(question.type).ranking is not None


# Per method that asks a model, which questions it answers by ranking their candidate answers (the
# others it generates text for). A vote asks no model: its answers come from other runs (kaoshi rescore
# re-grades them, runner/rescore.py).
_RANKS: dict[Method, Callable[[Question], bool]] = {
    Method.GENERATE: _never,
    Method.LOGLIK: _has_ranking,
}
MODEL_METHODS: tuple[Method, ...] = tuple(_RANKS)
# The methods a run can ask a model with, by name (a vote is made from stored runs, by kaoshi vote).
METHODS = tuple(method.value for method in MODEL_METHODS)


def ranked(question: Question, method: Method | str) -> bool:
    """Whether a run of `method` answers `question` by ranking candidates (else by generating text)."""
    rule = _RANKS.get(Method(method))
    if rule is None:
        raise InputError(f"a {Method(method).value} run has no model output to read answers from")
    return rule(question)


def read_output(
    question: Question, output: ModelOutput, method: Method | str, prompt: str | None = None
) -> Reading:
    """The answer a model output gives: the most likely candidate (ranked questions) or the text's answer
    (`prompt`, for completion prompts, is removed when the model echoes it)."""
    if ranked(question, method):
        return Reading(_most_likely(question, output), "loglik")
    return Reading(extract_answer(question, output.text or "", prompt), "rules")


def _most_likely(question: Question, output: ModelOutput) -> Extraction:
    ranking = kind_of(question.type).ranking
    scores = output.logprobs
    if ranking is None or not scores:
        return Extraction(None, "unparsed")
    best = max(scores, key=lambda candidate: scores[candidate])
    return Extraction(ranking.answer_of(question, best), "ok")
