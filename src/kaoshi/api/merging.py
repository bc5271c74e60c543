"""`kaoshi.merge`: the shards of a run (`--shard I/N`, one store each or several in one) joined into one."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from kaoshi.api.summary import StoreLike, keep_counts, open_store
from kaoshi.runner.shards import MergeOutcome, merge_shards
from kaoshi.store import Store


def merge(
    sources: Sequence[Store | str | Path], *, store: StoreLike = None, run_name: str | None = None
) -> list[MergeOutcome]:
    """Join every sharded run found in `sources` into `store`: one run per group of shards whose specs
    agree apart from the shard, named without its `-shardIofN` suffix (or `run_name`). Each outcome says
    which shards were joined and which are missing; questions found in two shards are kept once and
    named. A merged run whose shards are all there and answered is finished, else interrupted."""
    with ExitStack() as stack:
        opened = [stack.enter_context(open_store(source, read_only=True)) for source in sources]
        dest = stack.enter_context(open_store(store, must_exist=False))
        outcomes = merge_shards(opened, dest, run_name)
        for merged in outcomes:
            keep_counts(dest, merged.name)  # the next `kaoshi report` of the merged run reads them
        return outcomes
