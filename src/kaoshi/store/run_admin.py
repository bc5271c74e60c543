"""Removing and renaming runs (`kaoshi runs rm` / `mv`): every row of the run, in every table that names
it, in one transaction; never a run another live process holds, and never any other run."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kaoshi.store.errors import StoreError
from kaoshi.store.leases import LeaseHolder, owner_gone
from kaoshi.store.records import RunRecord, RunStatus
from kaoshi.store.rows import RUN_QUERY, run_from_row
from kaoshi.store.writes import write_transaction

# Every table with a column holding a run's name (kaoshi.store.schema), children before `runs`.
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("samples", "run"),
    ("repeat_samples", "run"),
    ("grades", "run"),
    ("run_owners", "run"),
    ("leases", "run"),
    ("claims", "run"),
    ("batches", "run"),
    ("runs", "name"),
)


@dataclass(frozen=True)
class RemovedRun:
    """A run removed (or, with dry_run, that would be removed) and how many rows it held."""

    name: str
    samples: int
    grades: int


@dataclass(frozen=True)
class RenamedRun:
    """A run renamed from `old` to `new`, with the samples and grades that moved with it."""

    old: str
    new: str
    samples: int
    grades: int


def remove_runs(
    db: sqlite3.Connection, path: Path, names: Sequence[str], *, lock_wait_s: float, dry_run: bool = False
) -> tuple[RemovedRun, ...]:
    """Delete each named run with its samples, grades, owner, leases and claims, all in one transaction:
    an unknown name or a run a live process holds is a StoreError and nothing is removed. `dry_run`:
    check and count, delete nothing."""
    wanted = list(dict.fromkeys(names))  # each once, in the order given
    if not wanted:
        raise StoreError("no run named to remove")

    def action() -> tuple[RemovedRun, ...]:
        removed = []
        for name in wanted:
            _require_idle(db, path, name, "remove")
            _require_no_batches_out(db, path, name)
            removed.append(RemovedRun(name, _count(db, "samples", name), _count(db, "grades", name)))
        if not dry_run:
            # the texts only these runs held stay in `texts` until `kaoshi store compact` (telling them
            # reads every row left, with the write lock held: seconds a million samples)
            for name in wanted:
                for table, column in RUN_COLUMNS:
                    db.execute(f"DELETE FROM {table} WHERE {column}=?", (name,))
        return tuple(removed)

    return write_transaction(db, path, action, lock_wait_s, "nothing was removed")


def _require_no_batches_out(db: sqlite3.Connection, path: Path, name: str) -> None:
    """A run whose provider batches are still out keeps them in the store: removed, its batches would run
    on (and be billed) with nothing left to collect them, and a new run of its name would send them again."""
    has_table = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='batches'").fetchone()
    if has_table is None:
        return
    row = db.execute(
        "SELECT COUNT(*), TOTAL(json_array_length(requests)) FROM batches "
        "WHERE run=? AND collected_at IS NULL",
        (name,),
    ).fetchone()
    if row[0]:
        raise StoreError(
            f"{path}: run {name!r} has {int(row[1])} request(s) in {row[0]} provider batch(es) not "
            "collected yet (kaoshi runs shows it waiting): the same kaoshi run --batch (or judge --batch) "
            "collects them; nothing was removed"
        )


def rename_run(db: sqlite3.Connection, path: Path, old: str, new: str, *, lock_wait_s: float) -> RenamedRun:
    """Rename run `old` to `new` in every table that names it, in one transaction; StoreError (nothing
    changed) for an unknown `old`, an existing `new`, or a run a live process holds."""
    if not new or new != new.strip():
        raise StoreError(
            f"cannot rename run {old!r} to {new!r}: a run name is not empty nor padded with spaces"
        )
    if new == old:
        raise StoreError(f"run {old!r} already has that name")

    def action() -> RenamedRun:
        _require_idle(db, path, old, "rename")
        if _exists(db, new):
            raise StoreError(
                f"cannot rename run {old!r} to {new!r}: a run named {new!r} exists in {path}; "
                f"remove it first (kaoshi runs rm {new}) or choose another name"
            )
        # a lease is taken before its run is made: a live one on `new` is a run starting under that name
        starting = [h for h in _holders(db, new) if not owner_gone(h.pid, h.host)]
        if starting:
            raise StoreError(
                f"cannot rename run {old!r} to {new!r}: a run named {new!r} is being started by "
                f"{starting[0].describe(time.time())}; choose another name"
            )
        for table in ("leases", "claims"):  # what dead processes left under `new`
            db.execute(f"DELETE FROM {table} WHERE run=?", (new,))
        # samples and grades reference runs(name): checked at COMMIT, when every table has the new name
        db.execute("PRAGMA defer_foreign_keys=ON")
        for table, column in RUN_COLUMNS:
            db.execute(f"UPDATE {table} SET {column}=? WHERE {column}=?", (new, old))
        return RenamedRun(old, new, _count(db, "samples", new), _count(db, "grades", new))

    return write_transaction(db, path, action, lock_wait_s, "nothing was renamed")


def _require_idle(db: sqlite3.Connection, path: Path, name: str, verb: str) -> RunRecord:
    """The run `name`; StoreError when there is none (naming the runs there are) or a live process
    holds it: a lease holder alive (beating, or silent but not dead; whatever the run's stored status),
    or a run that reads as running without a lease (opened on another host, or by an older kaoshi)."""
    row = db.execute(RUN_QUERY + " WHERE name=?", (name,)).fetchone()
    if row is None:
        known = ", ".join(r[0] for r in db.execute("SELECT name FROM runs ORDER BY created_at")) or "none"
        raise StoreError(f"cannot {verb} run {name!r}: no run of that name in {path} (runs: {known})")
    holders = _holders(db, name)
    record = run_from_row(row, {name: holders} if holders else {}, path)
    now = time.time()
    alive = [holder for holder in holders if not owner_gone(holder.pid, holder.host)]
    beating = [holder for holder in alive if not holder.silent(now)]
    if beating:
        held = f"it is being run by {beating[0].describe(now)}"
    elif alive:
        held = f"it is held by {alive[0].describe_silence(now)}"
    elif record.status in (RunStatus.RUNNING, RunStatus.HELD):
        owner = db.execute("SELECT pid, host FROM run_owners WHERE run=?", (name,)).fetchone()
        by = "a process kaoshi cannot name" if owner is None else f"pid {owner[0]} on host {owner[1]}"
        held = f"it is {record.status.value} (opened by {by})"
    else:
        return record
    raise StoreError(f"cannot {verb} run {name!r}: {held}; wait for it to end, or stop that process first")


def _exists(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM runs WHERE name=?", (name,)).fetchone() is not None


def _holders(db: sqlite3.Connection, name: str) -> list[LeaseHolder]:
    rows = db.execute(
        "SELECT holder, pid, host, started_at, heartbeat_at FROM leases WHERE run=? ORDER BY started_at",
        (name,),
    )
    return [LeaseHolder(*row) for row in rows]


def _count(db: sqlite3.Connection, table: str, run: str) -> int:
    count: int = db.execute(f"SELECT COUNT(*) FROM {table} WHERE run=?", (run,)).fetchone()[0]
    return count
