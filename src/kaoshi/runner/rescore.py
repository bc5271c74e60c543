"""Re-score a stored run into a new run: extraction and grading again from the raw responses, or for a
vote, grading of its voted answers again (dispatched on the run's method).

No model is called; the original run is left as it is. Useful after changing the multiple-choice policy
or upgrading the extractor: nothing is paid for twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from kaoshi.data.model import Question
from kaoshi.models.base import Model, ModelOutput
from kaoshi.runner.llm_extract import apply_extractor_reply, rescue_each
from kaoshi.runner.samples import grade_for, score_record
from kaoshi.store.records import Method, RunSpec, SampleRecord, SampleStatus, run_method
from kaoshi.store.sqlite import Store, StoreError


@dataclass(frozen=True)
class RescoreOutcome:
    samples: int
    changed: int
    seconds: float


def _read_again(sample: SampleRecord, question: Question, spec: RunSpec) -> SampleRecord:
    """Extract the answer from the stored model output again (text or log-probabilities), and grade it."""
    output = ModelOutput(sample.question_id, text=sample.response, logprobs=sample.logprobs)
    echo = None if spec.chat else sample.prompt  # chat prompts are stored as messages JSON
    return replace(score_record(sample, question, output, spec, echo), extractor_response=None)


def _grade_again(sample: SampleRecord, question: Question, spec: RunSpec) -> SampleRecord:
    """Grade the stored answer again (a vote: its response is the ballot, not text to read)."""
    answer = sample.answer if sample.status == SampleStatus.OK else None
    grade = grade_for(question, answer, spec)
    return replace(sample, correct=grade.correct, score=grade.points)


@dataclass(frozen=True)
class _Rescorer:
    rescore: Callable[[SampleRecord, Question, RunSpec], SampleRecord]
    reads_text: bool  # answers come from model text, so an LLM extractor may read the unparsed ones


_RESCORERS: dict[Method, _Rescorer] = {
    Method.GENERATE: _Rescorer(_read_again, reads_text=True),
    Method.LOGLIK: _Rescorer(_read_again, reads_text=True),
    Method.VOTE: _Rescorer(_grade_again, reads_text=False),
}


def rescore_run(
    store: Store,
    source: str,
    target: str,
    extractor: Model | None = None,
    *,
    on_plan: Callable[[int, int], None] | None = None,
    on_sample: Callable[[SampleRecord], None] | None = None,
    **changes: object,
) -> RescoreOutcome:
    """Copy `source` into `target` with spec `changes` (e.g. multi_policy="partial"), re-scoring every
    sample the way its method obtained it: model outputs are re-extracted and re-graded, a vote's answers
    are re-graded as voted. Errored samples stay errors (there is no response to read).

    LLM extraction (model outputs only): with the same `llm_extractor` as the source, its stored replies
    are read again (no call); with a new one, `extractor` (that model) is asked about the samples the
    rules leave unparsed; with none, only the rules apply. The evaluated model is never called.

    on_plan(total, 0): the samples to re-score, before the first is stored; on_sample: each re-scored
    sample as it is stored (one the extractor is asked about, as its reply arrives)."""
    original = store.get_run(source)
    if store.find_run(target) is not None:
        raise StoreError(f"run {target!r} already exists; choose another --run-name")
    unknown = set(changes) - set(original.spec.to_json())
    if unknown:
        raise StoreError(f"cannot change {', '.join(sorted(unknown))} when re-scoring")
    method = run_method(original.spec)
    rescorer = _RESCORERS[method]
    spec: RunSpec = replace(original.spec, rescored_from=source, **changes)  # type: ignore[arg-type]
    if spec.llm_extractor is not None and not rescorer.reads_text:
        raise StoreError(
            f"run {source!r} is a {method.value} run: its answers are not read from model text, so "
            "an --llm-extractor has nothing to read"
        )
    reuse_replies = spec.llm_extractor is not None and spec.llm_extractor == original.spec.llm_extractor
    if spec.llm_extractor is not None and not reuse_replies and extractor is None:
        raise StoreError(f"a new --llm-extractor {spec.llm_extractor!r} needs its model to re-score")
    started = time.perf_counter()
    store.open_run(target, spec)
    # every sample of a run of k samples a question: the re-scored run has the same k
    samples = store.all_samples(source) if original.spec.repeats > 1 else store.samples(source)
    if on_plan is not None:
        on_plan(len(samples), 0)
    before = {(s.question_id, s.sample): s for s in samples}
    changed = 0

    def keep(after: SampleRecord) -> None:
        nonlocal changed
        was = before[(after.question_id, after.sample)]
        changed += (after.answer, after.status, after.score) != (was.answer, was.status, was.score)
        store.add_sample(target, after)
        if on_sample is not None:
            on_sample(after)

    to_ask: list[tuple[Question, SampleRecord]] = []
    for sample in samples:
        if sample.status == SampleStatus.ERROR:
            keep(sample)
            continue
        question = Question.from_content(sample.question)
        updated = rescorer.rescore(sample, question, spec)
        if updated.status == SampleStatus.UNPARSED and rescorer.reads_text:
            if reuse_replies and sample.extractor_response is not None:
                updated = apply_extractor_reply(question, updated, sample.extractor_response, spec)
            elif extractor is not None and not reuse_replies:
                to_ask.append((question, updated))  # stored as the extractor's reply arrives
                continue
        keep(updated)
    if to_ask and extractor is not None:
        for after in rescue_each(extractor, to_ask, spec):
            keep(after)
    store.finish_run(target)
    return RescoreOutcome(len(samples), changed, time.perf_counter() - started)
