"""The optional LLM extractor: another model reads the final answer from replies the rules left unparsed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from kaoshi.data.model import Question
from kaoshi.errors import InputError
from kaoshi.models.base import GenerateRequest, Model, ModelOutput, request_id
from kaoshi.prompts import answer_candidates
from kaoshi.prompts.plain import format_body
from kaoshi.qtypes import extract_answer, kind_of
from kaoshi.runner.samples import grade_for
from kaoshi.store.records import RunSpec, SampleRecord, SampleStatus

NO_ANSWER = "无"


# How extractor requests are sent: a model's generate, or its batch endpoint (kaoshi.runner.batching).
Generate = Callable[[list[GenerateRequest]], Iterable[ModelOutput]]


def extractor_prompt(question: Question, response: str) -> str:
    ask = kind_of(question.type).wording.extractor
    if ask is None:
        raise InputError(f"the LLM extractor reads no {question.type.value} answers")
    return (
        f"下面是一道题目和一个模型的回答。请判断这个回答最终给出的答案，{ask}；"
        f"如果回答没有给出答案，只输出“{NO_ANSWER}”。\n\n"
        f"题目：{format_body(question)}\n\n回答：{response}\n\n最终答案："
    )


def _askable(question: Question, sample: SampleRecord) -> bool:
    """An unparsed reply of a type the extractor reads (objective: open answers are the judges')."""
    return (
        sample.status == SampleStatus.UNPARSED
        and kind_of(question.type).wording.extractor is not None
        and bool(sample.response)
    )


def rescue_unparsed(
    extractor: Model,
    items: list[tuple[Question, SampleRecord]],
    spec: RunSpec,
    generate: Generate | None = None,
) -> list[SampleRecord]:
    """Ask the extractor about each unparsed objective sample; samples it cannot read stay unparsed."""
    settled = {(s.question_id, s.sample): s for s in rescue_each(extractor, items, spec, generate)}
    return [settled[(question.id, sample.sample)] for question, sample in items]


def rescue_each(
    extractor: Model,
    items: list[tuple[Question, SampleRecord]],
    spec: RunSpec,
    generate: Generate | None = None,
) -> Iterator[SampleRecord]:
    """Each of the items' samples once settled: those the extractor is not asked about at once, the others
    as its replies arrive (in the order they come); a sample it cannot read stays unparsed. `generate`:
    how the requests are sent (default: the extractor's generate; a batch endpoint's, with --batch)."""
    # by request id, unique per (question, sample): a run of k samples a question asks about each one
    asked = {request_id(q.id, s.sample): (q, s) for q, s in items if _askable(q, s)}
    yield from (s for q, s in items if request_id(q.id, s.sample) not in asked)
    if not asked:
        return
    requests = [
        GenerateRequest(key, extractor_prompt(q, s.response or ""), answer_candidates(q), max_new_tokens=16)
        for key, (q, s) in asked.items()
    ]
    for output in (generate or extractor.generate)(requests):
        if output.id not in asked:
            continue
        question, sample = asked.pop(output.id)
        sample = replace(sample, extractor_usage=_usage(output))
        if output.error is None and output.text is not None:
            sample = apply_extractor_reply(question, sample, output.text, spec)
        yield sample
    yield from (s for _, s in asked.values())  # no reply came back


def _usage(output: ModelOutput) -> dict[str, Any] | None:
    """What the extractor's call cost, where its server said (the ledger's extractor role)."""
    said = {
        "tokens_in": output.tokens_in,
        "tokens_out": output.tokens_out,
        "tokens_cached": output.cached_tokens,
        "batch_id": output.batch_id,
    }
    kept = {name: value for name, value in said.items() if value is not None}
    return kept or None


def apply_extractor_reply(
    question: Question, sample: SampleRecord, reply: str, spec: RunSpec
) -> SampleRecord:
    """The sample with the extractor's reply stored and, when the reply names an answer, graded on it."""
    extraction = extract_answer(question, reply)
    updated = replace(sample, extractor_response=reply)
    if SampleStatus(extraction.status) is not SampleStatus.OK:
        return updated
    grade = grade_for(question, extraction.answer, spec)
    return replace(
        updated,
        status=SampleStatus.OK,
        answer=extraction.answer,
        correct=grade.correct,
        score=grade.points,
        extracted_by="llm",
    )
