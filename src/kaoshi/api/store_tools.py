"""Keeping a store safe to copy and share: checkpoint, back up and check it (`kaoshi store ...`)."""

from __future__ import annotations

from pathlib import Path

from kaoshi.store import Store, default_store_path, require_store_file
from kaoshi.store.maintenance import BackupResult, CheckpointResult, StoreCheck, backup, check, checkpoint
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


def check_store(store: StorePath = None) -> StoreCheck:
    """Integrity check, schema version and run / sample counts; reads only (`.ok` False when damaged)."""
    return check(_store_file(store))


def _store_file(store: StorePath) -> Path:
    """The store given as a Store, a path or None ($KAOSHI_STORE, else the default), which must exist."""
    if isinstance(store, Store):
        return store.path
    return require_store_file(Path(store) if store is not None else default_store_path())


__all__ = [
    "BackupResult",
    "CheckpointResult",
    "StoreCheck",
    "backup_store",
    "check_store",
    "checkpoint_store",
]
