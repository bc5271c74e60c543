"""kaoshi run --reuse-from NAME: a run made from another run's answers that finished within their budget,
asking only the others (the ones cut off, errors, and what NAME never asked). For the same prompt,
decoding settings and seed, an answer that finished under a budget is the answer under a larger one: only
the budget may differ, and every reused answer's prompt is checked to be the one this run would send."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kaoshi.errors import InputError
from kaoshi.runner.samples import PendingQuestion
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
        if sample.status != SampleStatus.ERROR and not sample.truncated:
            stored[(sample.question_id, sample.sample)] = sample
    still: list[PendingQuestion] = []
    reused = 0
    for item in pending:
        answer = stored.get(item.key)
        if answer is None or not _same_request(answer, item):
            still.append(item)
            continue
        store.add_sample(name, replace(answer, position=item.position))
        reused += 1
    return still, reused
