"""Keeping a store file safe to copy: fold its write-ahead log in, back it up while runs write, check it."""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path

from kaoshi.store.errors import StoreError, naming_the_file, recover_hint
from kaoshi.store.holders import describe_holders
from kaoshi.store.opening import connect, is_writable
from kaoshi.store.schema import add_reading_stand_ins, stored_schema_version
from kaoshi.store.writes import DEFAULT_LOCK_WAIT_S

_LONGEST_PAUSE_S = 2.0
_PROBLEMS_SHOWN = 10


@dataclass(frozen=True)
class CheckpointResult:
    """A checkpoint: the -wal's frames copied into the store file, and the -wal emptied."""

    path: Path
    wal_bytes: int  # the size of the -wal before (0: there was nothing to fold in)


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


def backup(path: Path, out: Path) -> BackupResult:
    """A consistent copy of the store in `out` (one file, no -wal), made with SQLite's online backup while
    runs may be writing; `out` must not exist, and a damaged store is refused rather than copied."""
    _require_file(path)
    if out.exists():
        raise StoreError(f"{out} exists; a backup never overwrites a file: choose a new name")
    source = _open_kaoshi_store(path, read_only=not is_writable(path))
    out.parent.mkdir(parents=True, exist_ok=True)
    # written beside `out` and renamed when complete: an interrupted backup leaves no half copy named OUT
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        target = sqlite3.connect(partial, isolation_level=None)
        try:
            with naming_the_file(path):
                source.backup(target)  # all pages in one step: one read snapshot, writers carry on
            problems = [row[0] for row in target.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise StoreError(f"{path} is damaged ({problems[0]}); not copied; {recover_hint(path)}")
            runs, samples = _count(target, "runs"), _count(target, "samples")
        finally:
            target.close()
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
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
    except StoreError as exc:
        return _with_problems(empty, [str(exc)])
    except sqlite3.DatabaseError as exc:
        return _with_problems(replace(empty, schema_version=version), [str(exc)], damaged=True)
    finally:
        db.close()
    found = StoreCheck(path, version, counts[0], counts[1], counts[2], empty.wal_bytes)
    return found if problems == ["ok"] else _with_problems(found, problems, damaged=True)


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
