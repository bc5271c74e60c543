"""The run loop. Each response is committed as it arrives (those that arrive together in one transaction)
before it is reported; re-running a run name resumes it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from itertools import islice

from kaoshi.analysis.cost import Usage
from kaoshi.data.model import Exam
from kaoshi.models.base import CapabilityError, GenerateRequest, LoglikRequest, Model, ModelOutput
from kaoshi.prompts import RenderOptions, Template, answer_candidates, render_fitting
from kaoshi.prompts.base import Fits
from kaoshi.qtypes import kind_of
from kaoshi.runner.asked import asked_by
from kaoshi.runner.batching import BatchAsker, BatchPolicy, check_batchable
from kaoshi.runner.cache import NO_CACHE, CachePolicy, answer_from_cache
from kaoshi.runner.gate import RequestGate
from kaoshi.runner.grouping import INSTANT_S, AnswerGroup
from kaoshi.runner.llm_extract import rescue_unparsed
from kaoshi.runner.repeats import sampling_of
from kaoshi.runner.reuse import reuse_answers
from kaoshi.runner.samples import METHODS, MODEL_METHODS, PendingQuestion, build_sample, new_tokens, ranked
from kaoshi.runner.spending import Spending
from kaoshi.store.batches import MODEL
from kaoshi.store.errors import StoreError
from kaoshi.store.leases import Lease
from kaoshi.store.records import Method, RunSpec, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store

ProgressCallback = Callable[[SampleRecord], None]


@dataclass(frozen=True)
class RunOutcome:
    name: str
    total: int
    already_done: int
    new_samples: int
    errors: int
    reused: int = 0  # answers taken from the run named by spec.reused_from (--reuse-from)
    cached: int = 0  # answers taken from the cache (kaoshi.runner.cache)


def plan_run(
    exam: Exam, template: Template, spec: RunSpec, model: Model, finished: set[tuple[str, int]]
) -> tuple[list[PendingQuestion], int]:
    """The samples still to ask (rendered, with as many exemplars as fit), a question's k samples one
    after the other (a backend reuses their shared prompt), and how many were finished. `finished`:
    (question id, sample index) of the stored answers."""
    options = RenderOptions(spec.shots, spec.chat, spec.system, tuple(spec.exemplars))
    asked = asked_by(spec, exam)  # a shard or a sample asks its part; positions stay the whole exam's
    pending: list[PendingQuestion] = []
    total = 0
    for position, question in enumerate(exam.questions):
        if not asked(question.id):
            continue
        total += spec.repeats
        missing = [k for k in range(spec.repeats) if (question.id, k) not in finished]
        if not missing:
            continue
        # Room for the answer: at least 256 tokens (what every run kept before budgets were per protocol,
        # so the exemplars that fit do not change), more where the budget is larger (CoT).
        prompt = render_fitting(
            template, question, exam, options, _fits(model, max(256, new_tokens(spec, question.type.value)))
        )
        pending.extend(PendingQuestion(question, position, prompt, sample) for sample in missing)
    return pending, total - len(pending)


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
    lease: Lease | None = None,
    spending: Spending | None = None,
    cache: CachePolicy = NO_CACHE,
    batch: BatchPolicy | None = None,
) -> RunOutcome:
    """Run the exam. `extractor`, when given, reads answers the rules left unparsed (spec.llm_extractor).
    `spending`: the run's cost cap (--max-cost), counting what its stored answers already cost; reached,
    nothing more is sent, what is in flight is stored, and CostCapReached is raised. `cache`: which
    answers are taken from the cache (kaoshi.runner.cache) instead of asked. `batch`: send the generation
    requests through the provider's batch endpoint (kaoshi.runner.batching) instead of in real time.

    lease: this process's lease of the run (Store.hold), taken by the caller before the model loads; without
    one the run takes its own, refusing a run another live process executes. Each chunk's questions are
    claimed just before they are asked, so processes joined on one run never ask a question twice; each
    request is sent only while the lease is still this process's (after a pause another may have taken
    it over), so a stop costs at most the requests in flight."""
    if spec.method not in MODEL_METHODS:
        raise CapabilityError(f"unknown method {spec.method.value!r} (known: {', '.join(METHODS)})")
    _check_capabilities(model, exam, spec.method)
    _check_sampling(model, spec)
    if batch is not None:
        check_batchable(model, spec)
    held: AbstractContextManager[Lease] = store.hold(name) if lease is None else nullcontext(lease)
    with held as current:
        # Every prompt is rendered before the run is written, so a run refused for a reason known before
        # its first question (a question its template cannot render) leaves no run behind.
        pending, done = plan_run(exam, template, spec, model, store.finished_keys(name))
        store.open_run(name, spec)
        reused = 0
        if spec.reused_from is not None:
            pending, reused = reuse_answers(store, spec.reused_from, name, spec, pending)
        pending, cached = answer_from_cache(store, name, spec, pending, cache, model, current)
        if on_plan is not None:
            on_plan(done + reused + cached + len(pending), done + reused + cached)
        if spending is not None:
            _sync(spending, store, name)  # what earlier sessions of the run spent
        asker = _ClaimingAsker(name, spec, model, template, store, current, on_sample, extractor, spending)
        ask: Callable[[Sequence[PendingQuestion]], list[PendingQuestion]] = asker.ask
        if batch is not None:
            batcher = BatchAsker(
                name, spec, model, store, current, batch, lambda p: _generate_request(p, spec),
                asker.stored, extractor, spending,
            )  # fmt: skip

            def batched(items: Sequence[PendingQuestion]) -> list[PendingQuestion]:
                outcome = batcher.ask(items)
                return outcome.skipped + asker.ask(outcome.realtime)

            ask = batched
        else:
            _check_no_batches_open(store, name)
        skipped = ask(pending)
        if skipped:
            # questions another process claimed: free again if it died meanwhile, else its to answer
            current.reap()
            finished = store.finished_keys(name)
            ask([p for p in skipped if p.key not in finished])
        # a process joined on a run leaves it running while another still answers its part
        asked = asked_by(spec, exam)  # a shard or a sample is done when its part is
        wanted = {(q.id, k) for q in exam.questions if asked(q.id) for k in range(spec.repeats)}
        if store.sample_keys(name) >= wanted:
            store.finish_run(name)
    return RunOutcome(
        name, done + reused + cached + len(pending), done, asker.asked, asker.errors, reused, cached
    )


class _ClaimingAsker:
    """Asks the questions this process claims, chunk by chunk, and stores each answer as it arrives."""

    def __init__(
        self,
        name: str,
        spec: RunSpec,
        model: Model,
        template: Template,
        store: Store,
        lease: Lease,
        on_sample: ProgressCallback | None,
        extractor: Model | None,
        spending: Spending | None = None,
    ) -> None:
        self.name, self.spec, self.model, self.template = name, spec, model, template
        self.store, self.lease, self.on_sample, self.extractor = store, lease, on_sample, extractor
        self.spending = spending
        self.asked = 0
        self.errors = 0

    def ask(self, pending: Sequence[PendingQuestion]) -> list[PendingQuestion]:
        """Ask what can be claimed of `pending`; the questions another process had claimed."""
        skipped: list[PendingQuestion] = []
        for chunk in _chunks(pending, self.model.chunk_size(self.spec.method)):
            if self.spending is not None and self.lease.others_alive():
                _sync(self.spending, self.store, self.name)  # what the processes beside this one spent
            # a claim per sample: a question's k samples may fall in different chunks
            claimed = self.lease.claim([p.request_id for p in chunk])
            mine = [p for p in chunk if p.request_id in claimed]
            skipped.extend(p for p in chunk if p.request_id not in claimed)
            if mine:
                self._ask_chunk(mine)
        return skipped

    def _ask_chunk(self, chunk: list[PendingQuestion]) -> None:
        """Ask and store a chunk, the answers that come together in one transaction (runner.grouping). A
        write the store refuses (a full disk, a lock held past the wait) stops the sending; the answers
        already in flight still come back and are kept with it, so that the error counts every answer paid
        for and not written. A lease taken over stops it the same way."""
        gate = RequestGate(self.lease, self.spending)
        group = AnswerGroup(self.store, self.name, self.stored)
        refused: StoreError | None = None
        answers = _ask(self.model, chunk, self.spec, self.template, gate)
        try:
            for pending_question, output, waited in answers:
                sample = build_sample(pending_question, output, self.spec)
                if refused is None and self.extractor is not None and sample.status == SampleStatus.UNPARSED:
                    group.commit()  # the answers so far do not wait on the extractor
                    unparsed = [(pending_question.question, sample)]
                    sample = rescue_unparsed(self.extractor, unparsed, self.spec)[0]
                    waited = INSTANT_S  # and the ones after it are committed as they come
                try:
                    group.add(sample, waited)  # after a refusal: kept in memory with the rest
                except StoreError as exc:
                    refused = refused or exc
                    gate.close(exc)
            group.commit()
        except StoreError as exc:  # the last commit, or one before the extractor
            refused = refused or exc
        except BaseException:
            with contextlib.suppress(StoreError):  # what came back is kept before the stop goes on
                group.commit()
            raise
        if refused is not None:
            self.store.flush()  # a StoreError counting what is still unwritten, or every answer written
            raise refused
        if gate.stopped is not None:
            raise gate.stopped

    def stored(self, sample: SampleRecord) -> None:
        """An answer is committed: count it and report it."""
        self.asked += 1
        self.errors += sample.status == SampleStatus.ERROR
        if self.spending is not None:
            self.spending.add(sample)
        if self.on_sample is not None:
            self.on_sample(sample)


def _sync(spending: Spending, store: Store, name: str) -> None:
    """The run's spending from its paid answers in the store (those taken from elsewhere cost it nothing)."""
    spending.sync(Usage(*store.run_usage(name)))


def _check_no_batches_open(store: Store, name: str) -> None:
    """A run with provider batches still open is resumed with --batch: asking their questions in real time
    would pay for them twice."""
    waiting = store.batches.waiting(MODEL).get(name)
    if waiting is not None:
        batches, requests = waiting
        raise CapabilityError(
            f"run {name!r} has {requests} request(s) waiting in {batches} provider batch(es): the same "
            "command with --batch collects them (and --batch-fallback realtime asks what they leave "
            "unanswered in real time)"
        )


def _check_capabilities(model: Model, exam: Exam, method: Method) -> None:
    if not model.supports(method.value):
        raise CapabilityError(f"model {model.spec!r} cannot do --method {method.value}")
    needs_generation = any(not ranked(q, method) for q in exam.questions)
    if needs_generation and not model.supports(Method.GENERATE.value):
        raise CapabilityError(f"model {model.spec!r} cannot generate text, which open questions need")


def _check_sampling(model: Model, spec: RunSpec) -> None:
    """Refuse, before any request, decoding options the backend cannot honour."""
    wanted = sampling_of(spec, "", 0).options_set()
    unable = [name for name in wanted if name not in model.sampling_options]
    if unable:
        flags = ", ".join("--" + name.replace("_", "-") for name in unable)
        honoured = ", ".join("--" + n.replace("_", "-") for n in sorted(model.sampling_options)) or "none"
        raise CapabilityError(f"model {model.spec!r} cannot honour {flags} (it honours: {honoured})")
    if model.options.extra_body and not model.takes_extra_body:
        raise CapabilityError(f"model {model.spec!r} sends no request body: --extra-body is for openai")
    if spec.thinking is not None and not spec.chat:
        raise CapabilityError(
            "--thinking switches a chat template's thinking; this run sends plain text (--no-chat, or the "
            "backend's default): use --chat"
        )
    extra = model.options.extra_body or {}
    template_kwargs = extra.get("chat_template_kwargs")
    nested = isinstance(template_kwargs, dict) and "enable_thinking" in template_kwargs
    if spec.thinking is not None and ("enable_thinking" in extra or nested):
        raise CapabilityError("--extra-body sets enable_thinking, which --thinking sets: give one of them")


def _chunks(items: Sequence[PendingQuestion], size: int) -> Iterator[list[PendingQuestion]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, max(1, size))):
        yield chunk


def _ask(
    model: Model, chunk: list[PendingQuestion], spec: RunSpec, template: Template, gate: RequestGate
) -> Iterator[tuple[PendingQuestion, ModelOutput, float]]:
    """Send a chunk: log-likelihood for the questions the method ranks, generation for the others; each
    request through the gate, as the backend takes it. Each answer comes with the seconds the backend took
    to give it (0 for one the runner gives itself)."""
    by_id = {p.request_id: p for p in chunk}
    scored: list[PendingQuestion] = []
    loglik_requests: list[LoglikRequest] = []
    generated: list[PendingQuestion] = []
    for pending in chunk:
        if not ranked(pending.question, spec.method):
            generated.append(pending)
        elif candidates := answer_candidates(pending.question):
            scored.append(pending)
            loglik_requests.append(_loglik_request(pending, template, candidates))
        else:
            yield (
                pending,
                ModelOutput(
                    pending.request_id,
                    error=f"too many options ({len(pending.question.options)}) to rank every answer by "
                    "log-likelihood; use --method generate",
                ),
                0.0,
            )
    scored_requests = gate.requests(loglik_requests)
    generated_requests = gate.requests([_generate_request(p, spec) for p in generated])
    streams: list[Iterator[ModelOutput]] = []
    if scored:
        streams.append(model.loglikelihood(scored_requests))
    if generated:
        streams.append(model.generate(generated_requests))
    sent = {p.request_id for p in scored} | {p.request_id for p in generated}
    seen = {p.request_id for p in chunk} - sent  # answered above, without a request
    for stream in streams:
        for output, waited in _timed(stream):
            if output.id in by_id and output.id not in seen:
                seen.add(output.id)
                yield by_id[output.id], output, waited
    withheld = scored_requests.withheld | generated_requests.withheld  # never sent: nothing to report
    for missing in (p for p in chunk if p.request_id not in seen and p.request_id not in withheld):
        yield (
            missing,
            ModelOutput(missing.request_id, error="the backend returned no output for this request"),
            0.0,
        )


def _timed(stream: Iterator[ModelOutput]) -> Iterator[tuple[ModelOutput, float]]:
    """Each output of a backend's stream with the seconds the backend took to give it."""
    while True:
        asked_at = time.perf_counter()
        output = next(stream, None)
        if output is None:
            return
        yield output, time.perf_counter() - asked_at


def _loglik_request(
    pending: PendingQuestion, template: Template, candidates: tuple[str, ...]
) -> LoglikRequest:
    prompt = pending.prompt
    # Candidates that can be prefixes of one another (letter sets) are scored with what ends an answer
    # in the prompt's format, so 'ABCD' never loses to its own prefix 'AB'; the others are scored bare.
    ranking = kind_of(pending.question.type).ranking
    if ranking is not None and ranking.with_answer_end:
        answer_end = template.answer_end(chat=prompt.messages is not None)
    else:
        answer_end = ""
    return LoglikRequest(
        pending.request_id,
        prompt.text,
        candidates,
        prompt.messages,
        answer_end=answer_end,
    )


def _generate_request(pending: PendingQuestion, spec: RunSpec) -> GenerateRequest:
    return GenerateRequest(
        pending.request_id,
        pending.prompt.text,
        choices=answer_candidates(pending.question),
        max_new_tokens=new_tokens(spec, pending.question.type.value),
        messages=pending.prompt.messages,
        sampling=sampling_of(spec, pending.question.id, pending.sample),
        sample=pending.sample,
    )
