"""A cache across runs: a request identical to one already answered (the same model and backend settings,
the same prompt, budget and decoding, the same sample index and seed) is answered from the store instead
of being paid for again, from this store and the stores named with `--cache-from`.

Every generated answer is stored with its request's key (`request_key`), so a later run finds it by an
index. Greedy requests are answered from the cache by default; sampled ones only when asked (a sampled
answer is one draw: a second run usually wants another), and never an error. An answer taken from the
cache, as one taken with --reuse-from, records where it came from (`answered_from`): its tokens were paid
by that run, and this run's cost leaves them out. It is extracted and graded again under this run's rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kaoshi.models.base import Model
from kaoshi.runner.reuse import read_again
from kaoshi.runner.samples import PendingQuestion, request_key
from kaoshi.store.leases import Lease
from kaoshi.store.records import RunSpec, SampleRecord
from kaoshi.store.sqlite import Store


@dataclass(frozen=True)
class CachePolicy:
    """Which requests a run answers from the cache: `enabled` (--cache / --no-cache; None: the backend's
    default, on for a provider's model: Model.cached_by_default), sampled ones too (`sampled`), and from
    which other stores besides its own (`stores`, --cache-from)."""

    enabled: bool | None = None
    sampled: bool = False
    stores: tuple[Path, ...] = ()

    def on_for(self, model: Model) -> bool:
        return model.cached_by_default() if self.enabled is None else self.enabled


NO_CACHE = CachePolicy(enabled=False)


def cached_for(
    store: Store,
    name: str,
    spec: RunSpec,
    pending: Sequence[PendingQuestion],
    policy: CachePolicy,
    model: Model,
) -> list[tuple[str, SampleRecord, PendingQuestion]]:
    """The cached answers to `pending` (this store's other runs first, then `policy.stores` in order), each
    with where it came from and the sample it answers; nothing is written (kaoshi run --estimate asks
    this too)."""
    if not policy.on_for(model) or not pending or (spec.temperature > 0 and not policy.sampled):
        return []
    keyed: dict[int, list[PendingQuestion]] = {}
    for item in pending:
        key = request_key(item, spec)
        if key is not None:  # two questions may send the same request (the same stem under two ids)
            keyed.setdefault(key, []).append(item)
    here = store.cached_answers(list(keyed), name)
    found = {key: (f"run {run}", answer) for key, (run, answer) in here.items()}
    for path in policy.stores:
        missing = [key for key in keyed if key not in found]
        if not missing:
            break
        with Store(path, read_only=True) as other:
            elsewhere = other.cached_answers(missing)
        found.update({key: (f"{path}: run {run}", answer) for key, (run, answer) in elsewhere.items()})
    return [
        (source, answer, item)
        for key, (source, answer) in found.items()
        for item in keyed[key]
        if answer.prompt == item.prompt.text  # a key is 64 bits of a hash: check it is this request
    ]


def answer_from_cache(
    store: Store,
    name: str,
    spec: RunSpec,
    pending: Sequence[PendingQuestion],
    policy: CachePolicy,
    model: Model,
    lease: Lease,
) -> tuple[list[PendingQuestion], int]:
    """Store, as run `name`'s, the answers the cache holds for `pending` (cached_for); the samples still
    to ask, and how many came from the cache. Each is claimed first, as a question asked is: a process
    working beside this one on the run (--join) may have claimed it, and its answer is not overwritten."""
    candidates = cached_for(store, name, spec, pending, policy, model)
    claimed = lease.claim([item.request_id for _, _, item in candidates]) if candidates else set()
    taken = [
        replace(read_again(answer, item, spec), answered_from=source)
        for source, answer, item in candidates
        if item.request_id in claimed
    ]
    store.add_samples(name, taken)  # in one transaction
    answered = {(sample.question_id, sample.sample) for sample in taken}
    still = [item for item in pending if item.key not in answered]
    return still, len(taken)
