"""Keeping a store file safe to copy: fold its write-ahead log in, back it up while runs write, check it."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from kaoshi.store.errors import StoreError, naming_the_file, recover_hint
from kaoshi.store.holders import describe_holders
from kaoshi.store.opening import connect, is_writable
from kaoshi.store.rows import text_digest
from kaoshi.store.schema import (
    INSERT_TEXT,
    TEXT_REFS,
    add_reading_stand_ins,
    create_missing_tables,
    held_in_row,
    stored_schema_version,
)
from kaoshi.store.writes import DEFAULT_LOCK_WAIT_S, wait_out_locks, write_transaction

T = TypeVar("T")
_LONGEST_PAUSE_S = 2.0
_PROBLEMS_SHOWN = 10


@dataclass(frozen=True)
class CheckpointResult:
    """A checkpoint: the -wal's frames copied into the store file, and the -wal emptied."""

    path: Path
    wal_bytes: int  # the size of the -wal before (0: there was nothing to fold in)


@dataclass(frozen=True)
class CompactResult:
    """A compaction: how many samples now hold their prompt and question once in `texts`, which runs had
    them (their rows changed in place: what was kept of them is counted again), how many texts no sample
    held, and the store's size on disk (file and -wal) before and after."""

    path: Path
    moved: int
    runs: tuple[str, ...]
    dropped: int  # texts no sample held any more (of runs removed, answers replaced), deleted
    bytes_before: int
    bytes_after: int


@dataclass(frozen=True)
class BackupResult:
    source: Path
    out: Path
    runs: int
    samples: int
    size_bytes: int


@dataclass(frozen=True)
class StoreCheck:
    """What `PRAGMA integrity_check` and the schema say of a store file; `ok` when nothing is wrong."""

    path: Path
    schema_version: int | None
    runs: int
    samples: int
    grades: int
    wal_bytes: int  # committed rows not yet in the file itself: a copy needs the -wal too
    problems: tuple[str, ...] = ()
    advice: str | None = None  # what to do about the problems
    # samples that hold their prompt or question in their row (written before schema 2): `kaoshi store
    # compact` holds them once
    held_in_rows: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def checkpoint(path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S) -> CheckpointResult:
    """Copy everything in the -wal into the store file and empty the -wal (WAL checkpoint TRUNCATE), so
    that the file alone holds every committed row; waits out other processes up to `lock_wait_s`."""
    _require_file(path)
    if not is_writable(path):
        raise StoreError(f"{path}: cannot checkpoint it, no permission to write it or its folder")
    db = _open_kaoshi_store(path, read_only=False)
    wal_bytes = _wal_bytes(path)
    started = time.monotonic()
    pause = 0.05
    try:
        while True:
            with naming_the_file(path):
                busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if not busy:
                return CheckpointResult(path, wal_bytes)
            waited = time.monotonic() - started
            if waited >= lock_wait_s:
                raise StoreError(
                    f"{path}: could not checkpoint it, other processes kept it busy for {waited:.0f} s "
                    f"({describe_holders(path)}); `kaoshi store backup OUT` copies it while they run"
                )
            time.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE_S)
    finally:
        db.close()


def compact(path: Path, *, lock_wait_s: float = DEFAULT_LOCK_WAIT_S) -> CompactResult:
    """Hold the prompt and question of each sample written before schema 2 once, in `texts`, as samples
    written since hold theirs (schema.TEXT_REFS; every text reads back byte for byte), delete the texts no
    sample holds any more (of runs removed, answers replaced), then write the file again without its free
    pages (VACUUM) and fold the -wal in: the space that freed goes back to the file system. Rows move in
    transactions of _MOVED_AT_ONCE, so that runs writing meanwhile wait at most one; another process's lock is
    waited out up to `lock_wait_s`, and VACUUM needs no other process in the store for a moment. A compaction
    interrupted keeps what it moved, and the next one goes on."""
    _require_file(path)
    if not is_writable(path):
        raise StoreError(f"{path}: cannot compact it, no permission to write it or its folder")
    before = _disk_bytes(path)
    db = _open_kaoshi_store(path, read_only=False)
    try:

        def locked(action: Callable[[], T]) -> T:
            with naming_the_file(path):
                return wait_out_locks(path, action, time.monotonic(), lock_wait_s, what=_KEPT_WHAT)

        locked(lambda: create_missing_tables(db))  # schema 2: the texts table and the digests' columns
        moved, runs = 0, set[str]()
        for table in ("samples", "repeat_samples"):
            after: int | None = 0
            while after is not None:
                move = partial(_move_texts, db, table, after, runs)
                count, after = write_transaction(db, path, move, lock_wait_s, _KEPT_WHAT)
                moved += count
        dropped = write_transaction(db, path, partial(_drop_unheld_texts, db), lock_wait_s, _KEPT_WHAT)
        locked(lambda: db.execute("VACUUM"))
        locked(lambda: db.execute("PRAGMA wal_checkpoint(TRUNCATE)"))
    finally:
        db.close()
    return CompactResult(path, moved, tuple(sorted(runs)), dropped, before, _disk_bytes(path))


# Rows a transaction of a compaction moves: about a second of work, which a run writing meanwhile waits.
_MOVED_AT_ONCE = 5_000
_KEPT_WHAT = "what was moved so far is kept; the same command goes on from there"


def _move_texts(db: sqlite3.Connection, table: str, after: int, runs: set[str]) -> tuple[int, int | None]:
    """Move the texts of the next _MOVED_AT_ONCE rows of `table` after rowid `after` that hold them in
    the row to `texts` (in the caller's transaction); how many moved and the last rowid read (None: the
    table is done). Each run moved is added to `runs`."""
    names = [name for pair in TEXT_REFS.items() for name in pair]  # prompt, prompt_ref, question, ...
    rows = db.execute(
        f"SELECT rowid, run, position, {', '.join(names)} FROM {table} "
        f"WHERE rowid > ? AND ({held_in_row(db, table)}) ORDER BY rowid LIMIT {_MOVED_AT_ONCE}",
        (after,),
    ).fetchall()
    held, changed = [], []
    for rowid, run, position, *values in rows:
        refs: list[bytes | None] = []
        for text, ref in zip(values[::2], values[1::2], strict=True):
            digest = text_digest(text) if text and ref is None else None
            if digest is not None:
                held.append((position, digest, text))
            refs.append(digest)
        changed.append((*refs, rowid))
        runs.add(run)
    db.executemany(INSERT_TEXT, held)
    cleared = ", ".join(  # a text already held (its ref set) keeps its ref
        f"{column} = CASE WHEN ?{i + 1} IS NULL THEN {column} ELSE '' END, {ref} = COALESCE(?{i + 1}, {ref})"
        for i, (column, ref) in enumerate(TEXT_REFS.items())
    )
    db.executemany(f"UPDATE {table} SET {cleared} WHERE rowid = ?{len(TEXT_REFS) + 1}", changed)
    return len(rows), (rows[-1][0] if len(rows) == _MOVED_AT_ONCE else None)


def _drop_unheld_texts(db: sqlite3.Connection) -> int:
    """Delete the texts no sample holds (those of runs removed, of answers replaced); how many. In the
    transaction that reads which are held: a text a writer finds there stays until its sample is in."""
    held = {
        (position, ref)
        for table in ("samples", "repeat_samples")
        for position, *refs in db.execute(f"SELECT position, {', '.join(TEXT_REFS.values())} FROM {table}")
        for ref in refs
        if ref is not None
    }
    unheld = [key for key in db.execute("SELECT position, digest FROM texts") if key not in held]
    db.executemany("DELETE FROM texts WHERE position = ? AND digest = ?", unheld)
    return len(unheld)


def _disk_bytes(path: Path) -> int:
    return path.stat().st_size + _wal_bytes(path)


def backup(path: Path, out: Path) -> BackupResult:
    """A consistent copy of the store in `out` (one file, no -wal), made with SQLite's online backup while
    runs may be writing; `out` must not exist, and a damaged store is refused rather than copied."""
    _require_file(path)
    if out.exists():
        raise StoreError(f"{out} exists; a backup never overwrites a file: choose a new name")
    source = _open_kaoshi_store(path, read_only=not is_writable(path))
    out.parent.mkdir(parents=True, exist_ok=True)
    # written beside `out` and renamed when complete: an interrupted backup leaves no half copy named OUT
    unfinished = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        target = sqlite3.connect(unfinished, isolation_level=None)
        try:
            with naming_the_file(path):
                source.backup(target)  # all pages in one step: one read snapshot, writers carry on
            problems = [row[0] for row in target.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise StoreError(f"{path} is damaged ({problems[0]}); not copied; {recover_hint(path)}")
            runs, samples = _count(target, "runs"), _count(target, "samples")
        finally:
            target.close()
        os.replace(unfinished, out)
    except BaseException:
        unfinished.unlink(missing_ok=True)
        raise
    finally:
        source.close()
    return BackupResult(path, out, runs, samples, out.stat().st_size)


def check(path: Path) -> StoreCheck:
    """Integrity, schema version and counts of a store, read through sqlite's mode=ro (nothing is written)."""
    _require_file(path)
    empty = StoreCheck(path, None, 0, 0, 0, _wal_bytes(path))
    try:
        with naming_the_file(path):
            db = connect(path, read_only=True)
    except StoreError as exc:
        return _with_problems(empty, [str(exc)])
    version: int | None = None
    try:
        version = stored_schema_version(db, path)  # names another program's file, or a damaged one
        if version is None:
            return _with_problems(empty, [f"{path} is an empty SQLite database, not a kaoshi store yet"])
        add_reading_stand_ins(db)
        problems = [row[0] for row in db.execute("PRAGMA integrity_check").fetchmany(_PROBLEMS_SHOWN)]
        counts = [_count(db, table) for table in ("runs", "samples", "grades")]
        # a pass over the rows, as the integrity check makes (1.1 s against its 18 s at 1,000,000 samples)
        held_in_rows = sum(_held_in_rows(db, table) for table in ("samples", "repeat_samples"))
    except StoreError as exc:
        return _with_problems(empty, [str(exc)])
    except sqlite3.DatabaseError as exc:
        return _with_problems(replace(empty, schema_version=version), [str(exc)], damaged=True)
    finally:
        db.close()
    found = StoreCheck(
        path, version, counts[0], counts[1], counts[2], empty.wal_bytes, held_in_rows=held_in_rows
    )
    return found if problems == ["ok"] else _with_problems(found, problems, damaged=True)


def _held_in_rows(db: sqlite3.Connection, table: str) -> int:
    """The rows of `table` holding their prompt or question themselves, not in `texts` (schema.TEXT_REFS)."""
    count: int = db.execute(f"SELECT COUNT(*) FROM {table} WHERE {held_in_row(db, table)}").fetchone()[0]
    return count


def _with_problems(check: StoreCheck, problems: list[str], *, damaged: bool = False) -> StoreCheck:
    return replace(check, problems=tuple(problems), advice=recover_hint(check.path) if damaged else None)


def _require_file(path: Path) -> None:
    if not path.is_file():
        raise StoreError(f"no store at {path}")


def _open_kaoshi_store(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection to `path`; StoreError, nothing written, when it is not a kaoshi store we can read."""
    with naming_the_file(path):
        db = connect(path, read_only=read_only)
    try:
        if stored_schema_version(db, path) is None:
            raise StoreError(f"{path} is an empty SQLite database, not a kaoshi store yet")
    except BaseException:
        db.close()
        raise
    return db


def _wal_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def _count(db: sqlite3.Connection, table: str) -> int:
    count: int = db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    return count
