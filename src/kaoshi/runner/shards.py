"""Job-array sharding: `--shard I/N` evaluates a fixed part of an exam, and `merge` joins the shards of a
run (one store each, or several in one) into the run a single process would have made.

The partition is by question id (a hash), so it does not depend on file order, `--limit` or resuming:
each shard of a Slurm array can be re-run or resumed on its own."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kaoshi.data.model import Exam
from kaoshi.errors import InputError
from kaoshi.store.records import RunRecord, RunSpec, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store, StoreError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_NAME_SUFFIX = re.compile(r"-shard\d+of\d+$")
# Fields that differ between the shards of one run and are recomputed for the merged run.
SHARD_FIELDS = frozenset({"shard", "shard_questions"})


def parse_shard(text: str) -> tuple[int, int]:
    """`I/N` (1 <= I <= N) as (I, N); ValueError naming the option otherwise."""
    match = _SHARD.match(text)
    if not match:
        raise InputError(f"--shard must be I/N (e.g. 2/8), got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise InputError(f"--shard {text}: I must be between 1 and N")
    return index, count


def shard_of(question_id: str, count: int) -> int:
    """The shard (1..count) a question belongs to: a hash of its id, the same on every machine."""
    digest = hashlib.sha256(question_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(shard: str | None) -> Callable[[str], bool]:
    """Whether a question id is asked by the run of this shard ("I/N"; None: every question)."""
    if shard is None:
        return lambda _: True
    index, count = parse_shard(shard)
    return lambda question_id: shard_of(question_id, count) == index


def shard_count(exam: Exam, index: int, count: int) -> int:
    """The questions of `exam` in shard `index` of `count`; InputError when there are none."""
    asked = sum(1 for q in exam.questions if shard_of(q.id, count) == index)
    if not asked:
        raise InputError(f"shard {index}/{count} holds no question of the {len(exam)} evaluated")
    return asked


def shard_name(name: str, index: int, count: int) -> str:
    return f"{name}-shard{index}of{count}"


@dataclass(frozen=True)
class MergeOutcome:
    """One merged run: which shards it joined, its questions, and what is missing or doubled."""

    name: str
    shards: tuple[int, ...]
    count: int
    questions: int  # answered ones joined so far
    missing_shards: tuple[int, ...]
    duplicates: tuple[str, ...]  # question ids found in more than one shard (kept once)
    missing: int  # questions a shard was given but holds no answer for (errors or not run yet)

    @property
    def complete(self) -> bool:
        return not self.missing_shards and not self.missing


@dataclass(frozen=True)
class _Shard:
    store: str
    run: RunRecord
    index: int
    count: int
    samples: list[SampleRecord]


def merge_shards(sources: Sequence[Store], dest: Store, run_name: str | None = None) -> list[MergeOutcome]:
    """Join every sharded run in `sources` into `dest`, one merged run per group of shards (runs whose
    specs are equal apart from the shard); StoreError naming the field when shards of one name disagree,
    or naming both places when a shard is given twice."""
    groups: dict[str, list[_Shard]] = {}
    for source in sources:
        for run in source.runs():
            if run.spec.shard is None:
                continue
            index, count = parse_shard(run.spec.shard)
            base = _NAME_SUFFIX.sub("", run.name)
            groups.setdefault(base, []).append(
                _Shard(str(source.path), run, index, count, source.all_samples(run.name))
            )
    if not groups:
        raise StoreError(
            "no sharded run (kaoshi run --shard I/N) in " + ", ".join(str(s.path) for s in sources)
        )
    if run_name is not None and len(groups) > 1:
        raise StoreError(
            f"--run-name names one merged run, but the stores hold {len(groups)}: {', '.join(groups)}"
        )
    return [_merge_group(run_name or base, shards, dest) for base, shards in sorted(groups.items())]


def _merge_group(name: str, shards: list[_Shard], dest: Store) -> MergeOutcome:
    first = shards[0]
    seen: dict[int, _Shard] = {}
    for shard in shards:
        if shard.count != first.count:
            raise StoreError(f"run {name!r}: shards of {first.count} and of {shard.count} cannot be merged")
        differences = [d for d in _comparable(first.run.spec).differences(_comparable(shard.run.spec))]
        if differences:
            field, mine, theirs = differences[0]
            raise StoreError(
                f"run {name!r}: shard {shard.index} in {shard.store} has {field}={theirs!r}, shard "
                f"{first.index} in {first.store} has {field}={mine!r}; only the shard may differ"
            )
        if shard.index in seen:
            raise StoreError(
                f"run {name!r}: shard {shard.index}/{shard.count} is both in {seen[shard.index].store} "
                f"and in {shard.store}"
            )
        seen[shard.index] = shard
    # by (question id, sample index): a run of k samples a question merges every sample
    by_id: dict[tuple[str, int], SampleRecord] = {}
    duplicates: list[str] = []
    for shard in sorted(seen.values(), key=lambda s: s.index):
        for sample in shard.samples:
            if (sample.question_id, sample.sample) in by_id:
                if sample.sample == 0:
                    duplicates.append(sample.question_id)
                continue
            by_id[(sample.question_id, sample.sample)] = sample
    merged = sorted(by_id.values(), key=lambda s: (s.position, s.sample))
    firsts = [s for s in merged if s.sample == 0]
    # Shards render every prompt from the whole exam and record its fingerprint and size: the merged run
    # has the spec of a one-process run, whichever shards are there yet (merging again resumes it).
    spec = replace(first.run.spec, shard=None, shard_questions=None)
    dest.open_run(name, spec)
    for sample in merged:
        dest.add_sample(name, sample)
    missing = spec.n_questions - len(firsts) + sum(1 for s in firsts if s.status == SampleStatus.ERROR)
    if spec.repeats > 1:  # every sample of every question
        asked = spec.n_questions * spec.repeats
        missing = asked - len(merged) + sum(1 for s in merged if s.status == SampleStatus.ERROR)
    if not missing and len(seen) == first.count:
        dest.finish_run(name)
    else:
        dest.interrupt_run(name)
    return MergeOutcome(
        name=name,
        shards=tuple(sorted(seen)),
        count=first.count,
        questions=len(firsts),
        missing_shards=tuple(i for i in range(1, first.count + 1) if i not in seen),
        duplicates=tuple(duplicates),
        missing=missing,
    )


def _comparable(spec: RunSpec) -> RunSpec:
    values: dict[str, Any] = {name: None for name in SHARD_FIELDS}
    return replace(spec, **values)
