"""The run loop. Each response is stored as it arrives; re-running a run name resumes it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice

from kaoshi.data.model import Exam
from kaoshi.models.base import CapabilityError, GenerateRequest, LoglikRequest, Model, ModelOutput
from kaoshi.prompts import RenderOptions, Template, answer_candidates, render_fitting
from kaoshi.prompts.base import Fits
from kaoshi.qtypes import kind_of
from kaoshi.runner.llm_extract import rescue_unparsed
from kaoshi.runner.samples import MODEL_METHODS, PendingQuestion, build_sample, ranked
from kaoshi.store.records import Method, RunSpec, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store

# The methods a run can ask a model with (a vote is made from stored runs, by kaoshi vote).
METHODS = tuple(method.value for method in MODEL_METHODS)
ProgressCallback = Callable[[SampleRecord], None]


@dataclass(frozen=True)
class RunOutcome:
    name: str
    total: int
    already_done: int
    new_samples: int
    errors: int


def plan_run(
    exam: Exam, template: Template, spec: RunSpec, model: Model, finished: set[str]
) -> tuple[list[PendingQuestion], int]:
    """The questions still to ask (rendered, with as many exemplars as fit), and how many were finished."""
    options = RenderOptions(spec.shots, spec.chat, spec.system, tuple(spec.exemplars))
    # A shard's questions keep their places in the whole exam, so merged shards order as one run would.
    places = exam.metadata.get("positions", {})
    pending = []
    for index, question in enumerate(exam.questions):
        position = places.get(question.id, index)
        if question.id in finished:
            continue
        # Room for the answer: at least 256 tokens (what every run kept before budgets were per protocol,
        # so the exemplars that fit do not change), more where the budget is larger (CoT).
        prompt = render_fitting(
            template, question, exam, options, _fits(model, max(256, spec.new_tokens(question.type.value)))
        )
        pending.append(PendingQuestion(question, position, prompt))
    return pending, len(exam.questions) - len(pending)


def _fits(model: Model, reserve: int) -> Fits:
    return lambda prompt: model.fits(prompt.text, prompt.messages, reserve)


def execute_run(
    *,
    name: str,
    exam: Exam,
    spec: RunSpec,
    model: Model,
    template: Template,
    store: Store,
    on_sample: ProgressCallback | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    extractor: Model | None = None,
) -> RunOutcome:
    """Run the exam. `extractor`, when given, reads answers the rules left unparsed (spec.llm_extractor)."""
    if spec.method not in METHODS:
        raise CapabilityError(f"unknown method {spec.method!r} (known: {', '.join(METHODS)})")
    _check_capabilities(model, exam, Method(spec.method))
    store.open_run(name, spec)
    pending, done = plan_run(exam, template, spec, model, store.finished_ids(name))
    if on_plan is not None:
        on_plan(len(exam.questions), done)
    errors = 0
    for chunk in _chunks(pending, model.chunk_size(spec.method)):
        for pending_question, output in _ask(model, chunk, spec, template):
            sample = build_sample(pending_question, output, spec)
            if extractor is not None and sample.status == SampleStatus.UNPARSED:
                sample = rescue_unparsed(extractor, [(pending_question.question, sample)], spec)[0]
            store.add_sample(name, sample)
            errors += sample.status == SampleStatus.ERROR
            if on_sample is not None:
                on_sample(sample)
    store.finish_run(name)
    return RunOutcome(name, len(exam.questions), done, len(pending), errors)


def _check_capabilities(model: Model, exam: Exam, method: Method) -> None:
    if not model.supports(method.value):
        raise CapabilityError(f"model {model.spec!r} cannot do --method {method.value}")
    needs_generation = any(not ranked(q, method) for q in exam.questions)
    if needs_generation and not model.supports(Method.GENERATE.value):
        raise CapabilityError(f"model {model.spec!r} cannot generate text, which open questions need")


def _chunks(items: Sequence[PendingQuestion], size: int) -> Iterator[list[PendingQuestion]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, max(1, size))):
        yield chunk


def _ask(
    model: Model, chunk: list[PendingQuestion], spec: RunSpec, template: Template
) -> Iterator[tuple[PendingQuestion, ModelOutput]]:
    """Send a chunk: log-likelihood for the questions the method ranks, generation for the others."""
    by_id = {p.question.id: p for p in chunk}
    scored: list[PendingQuestion] = []
    generated: list[PendingQuestion] = []
    for pending in chunk:
        if not ranked(pending.question, spec.method):
            generated.append(pending)
        elif answer_candidates(pending.question):
            scored.append(pending)
        else:
            yield (
                pending,
                ModelOutput(
                    pending.question.id,
                    error=f"too many options ({len(pending.question.options)}) to rank every answer by "
                    "log-likelihood; use --method generate",
                ),
            )
    streams: list[Iterator[ModelOutput]] = []
    if scored:
        streams.append(model.loglikelihood([_loglik_request(p, template) for p in scored]))
    if generated:
        streams.append(model.generate([_generate_request(p, spec) for p in generated]))
    seen = {p.question.id for p in chunk if p not in scored and p not in generated}
    for stream in streams:
        for output in stream:
            if output.id in by_id and output.id not in seen:
                seen.add(output.id)
                yield by_id[output.id], output
    for missing in (p for p in chunk if p.question.id not in seen):
        yield (
            missing,
            ModelOutput(missing.question.id, error="the backend returned no output for this request"),
        )


def _loglik_request(pending: PendingQuestion, template: Template) -> LoglikRequest:
    prompt = pending.prompt
    # Candidates that can be prefixes of one another (letter sets) are scored with what ends an answer
    # in the prompt's format, so 'ABCD' never loses to its own prefix 'AB'; the others are scored bare.
    ranking = kind_of(pending.question.type).ranking
    if ranking is not None and ranking.with_answer_end:
        answer_end = template.answer_end(chat=prompt.messages is not None)
    else:
        answer_end = ""
    return LoglikRequest(
        pending.question.id,
        prompt.text,
        answer_candidates(pending.question),
        prompt.messages,
        answer_end=answer_end,
    )


def _generate_request(pending: PendingQuestion, spec: RunSpec) -> GenerateRequest:
    return GenerateRequest(
        pending.question.id,
        pending.prompt.text,
        choices=answer_candidates(pending.question),
        max_new_tokens=spec.new_tokens(pending.question.type.value),
        messages=pending.prompt.messages,
    )
