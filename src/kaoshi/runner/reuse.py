"""kaoshi run --reuse-from NAME: a run made from another run's answers that finished within their budget,
asking only the others (the ones cut off, errors, and what NAME never asked). For the same prompt,
decoding settings and seed, an answer that finished under a budget is the answer under a larger one: only
the budget may differ, and every reused answer's prompt is checked to be the one this run would send."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kaoshi.errors import InputError
from kaoshi.models.base import ModelOutput
from kaoshi.runner.llm_extract import apply_extractor_reply
from kaoshi.runner.samples import PendingQuestion, build_sample, new_tokens
from kaoshi.store.records import RunSpec, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store

# What may differ between the run and the one it reuses: the budgets (the point of reusing), the number of
# samples (a question's sample k is the same request in both), and what changes no answer.
# The questions may differ (a limited run reuses a whole one): each reused answer's question, gold answer
# and prompt are checked to be this run's.
_MAY_DIFFER = frozenset(
    {
        "max_new_tokens",
        "max_new_tokens_open",
        "repeats",
        "fingerprint",
        "n_questions",
        "limit",
        "limit_per_subject",
        "shard",
        "shard_questions",
    }
)


def check_reusable(source: RunSpec, spec: RunSpec, name: str) -> None:
    """InputError naming what differs when `source`'s answers are not the answers this run would get."""
    differences = [d for d in source.differences(spec) if d[0] not in _MAY_DIFFER]
    differences = [d for d in differences if d[0] != "model_settings" or _settings_differ(d[1], d[2])]
    if differences:
        shown = "; ".join(f"{field}: {old!r} there, {new!r} here" for field, old, new in differences)
        raise InputError(f"--reuse-from {name}: its answers were made otherwise ({shown})")
    if spec.max_new_tokens < source.max_new_tokens or _open_budget(spec) < _open_budget(source):
        raise InputError(
            f"--reuse-from {name}: this run's budget is smaller than that run's; an answer that finished "
            "there may be cut off here"
        )


def _open_budget(spec: RunSpec) -> int:
    return spec.max_new_tokens if spec.max_new_tokens_open is None else spec.max_new_tokens_open


def _settings_differ(old: Any, new: Any) -> bool:
    """Backend settings differ in what changes answers (another URL serving the same model does not)."""

    def without_url(settings: Any) -> Any:
        return {k: v for k, v in (settings or {}).items() if k != "base_url"}

    return bool(without_url(old) != without_url(new))


def _same_request(answer: SampleRecord, item: PendingQuestion) -> bool:
    question = item.question
    return (
        answer.prompt == item.prompt.text
        and answer.question == question.content()
        and answer.gold == question.answer
        and answer.points == question.points
    )


def reuse_answers(
    store: Store, source: str, name: str, spec: RunSpec, pending: Sequence[PendingQuestion]
) -> tuple[list[PendingQuestion], int]:
    """Store, as run `name`'s, `source`'s answers to `pending` that finished within their budget and were
    asked with the same prompt; the samples still to ask, and how many answers were reused."""
    found = store.find_run(source)
    if found is None:
        raise InputError(f"--reuse-from {source}: no such run in {store.path}")
    check_reusable(found.spec, spec, source)
    stored: dict[tuple[str, int], SampleRecord] = {}
    for sample in store.all_samples(source):
        if sample.status != SampleStatus.ERROR and not _maybe_cut_off(sample, found.spec):
            stored[(sample.question_id, sample.sample)] = sample
    still: list[PendingQuestion] = []
    reused = 0
    for item in pending:
        answer = stored.get(item.key)
        if answer is None or not _same_request(answer, item):
            still.append(item)
            continue
        store.add_sample(name, replace(read_again(answer, item, spec), answered_from=f"run {source}"))
        reused += 1
    return still, reused


def _maybe_cut_off(sample: SampleRecord, spec: RunSpec) -> bool:
    """Marked cut off, or as long as its budget: runs of the local backends before they marked cut-offs
    (kaoshi before issue 41) stored such answers unmarked, and one that used its whole budget may have
    been cut off."""
    budget = new_tokens(spec, sample.qtype)
    return sample.truncated or (sample.tokens_out is not None and sample.tokens_out >= budget)


def read_again(answer: SampleRecord, item: PendingQuestion, spec: RunSpec) -> SampleRecord:
    """A stored answer taken by this run (--reuse-from, the cache) as this run reads it: its stored output
    extracted and graded again under this kaoshi's rules and this run's scoring (the LLM extractor's stored
    reply read again, not asked again)."""
    output = ModelOutput(
        item.request_id,
        text=answer.response,
        logprobs=answer.logprobs,
        tokens_in=answer.tokens_in,
        tokens_out=answer.tokens_out,
        latency_s=answer.latency_s,
        served_model=answer.served_model,
        reasoning=answer.reasoning,
        reasoning_tokens=answer.tokens_reasoning,
        cached_tokens=answer.tokens_cached,
        truncated=answer.truncated,
    )
    sample = build_sample(item, output, spec)
    if sample.status == SampleStatus.UNPARSED and answer.extractor_response is not None:
        sample = apply_extractor_reply(item.question, sample, answer.extractor_response, spec)
    return sample
