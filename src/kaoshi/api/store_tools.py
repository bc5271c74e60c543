"""Keeping a store safe to copy and share: checkpoint, back up and check it (`kaoshi store ...`); removing
and renaming runs (`kaoshi runs rm` / `mv`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from kaoshi.api.summary import keep_counts
from kaoshi.store import Store, default_store_path, require_store_file
from kaoshi.store.maintenance import (
    BackupResult,
    CheckpointResult,
    CompactResult,
    StoreCheck,
    backup,
    check,
    checkpoint,
    compact,
)
from kaoshi.store.run_admin import RemovedRun, RenamedRun
from kaoshi.store.writes import DEFAULT_LOCK_WAIT_S

StorePath = Store | str | Path | None


def checkpoint_store(
    store: StorePath = None, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S
) -> CheckpointResult:
    """Fold the store's write-ahead log (-wal) into the store file, so that the file alone holds every
    committed answer (safe to copy); waits up to `lock_wait_s` for runs that are writing."""
    return checkpoint(_store_file(store), lock_wait_s=lock_wait_s)


def backup_store(out: str | Path, *, store: StorePath = None) -> BackupResult:
    """A consistent one-file copy of the store at `out` (which must not exist), safe while runs write."""
    return backup(_store_file(store), Path(out))


def compact_store(store: StorePath = None, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S) -> CompactResult:
    """Hold each prompt and question once, in the store's `texts` table, where samples written before schema 2
    hold them in their rows, delete the texts no sample holds (of runs removed), and give the space freed back
    to the file system (VACUUM); every text reads back byte for byte. The runs whose rows moved have their
    counts kept again, as the command that wrote them kept them (kaoshi.api.summary.keep_counts), so their
    reports stay as fast."""
    path = _store_file(store)
    if isinstance(store, Store):
        store.flush()  # its queued answers go in first
    result = compact(path, lock_wait_s=lock_wait_s)
    with _writable(store) as opened:
        for run in result.runs:
            if opened.find_run(run) is not None:  # not removed meanwhile
                keep_counts(opened, run)
    return result


def check_store(store: StorePath = None) -> StoreCheck:
    """Integrity check, schema version and run / sample counts; reads only (`.ok` False when damaged)."""
    return check(_store_file(store))


def remove_runs(
    names: str | Sequence[str], *, store: StorePath = None, dry_run: bool = False
) -> tuple[RemovedRun, ...]:
    """Delete runs with their samples, grades and leases, all in one transaction; each RemovedRun says
    how many samples and grades went. StoreError, nothing removed, when a name is unknown (the message
    lists the runs there are) or a live process holds the run. `dry_run`: check and count only (what
    `kaoshi runs rm` asks about before removing). No other run is touched."""
    wanted = [names] if isinstance(names, str) else list(names)
    with _writable(store) as opened:
        return opened.remove_runs(wanted, dry_run=dry_run)


def rename_run(old: str, new: str, *, store: StorePath = None) -> RenamedRun:
    """Rename run `old` to `new` in every table that names it (its samples and grades move with it), in
    one transaction. StoreError, nothing changed, when `old` is unknown, `new` exists, or a live process
    holds the run. No other run is touched (a shard `old-shard1of4` keeps its name)."""
    with _writable(store) as opened:
        return opened.rename_run(old, new)


@contextmanager
def _writable(store: StorePath) -> Iterator[Store]:
    """The store given as a Store (left open) or a path / None (opened for writing, closed after)."""
    if isinstance(store, Store):
        yield store
        return
    opened = Store(_store_file(store))
    try:
        yield opened
    finally:
        opened.close()


def _store_file(store: StorePath) -> Path:
    """The store given as a Store, a path or None ($KAOSHI_STORE, else the default), which must exist."""
    if isinstance(store, Store):
        return store.path
    return require_store_file(Path(store) if store is not None else default_store_path())


__all__ = [
    "BackupResult",
    "CheckpointResult",
    "CompactResult",
    "RemovedRun",
    "RenamedRun",
    "StoreCheck",
    "backup_store",
    "check_store",
    "checkpoint_store",
    "compact_store",
    "remove_runs",
    "rename_run",
]
