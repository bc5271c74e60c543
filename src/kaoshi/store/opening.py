"""Connecting to a store file: read-write, or read-only (sqlite's mode=ro) for a store this process may not
write."""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
from pathlib import Path

from kaoshi.store.errors import StoreError, is_cannot_open, is_read_only, store_error

IN_MEMORY = ":memory:"
_log = logging.getLogger("kaoshi")
# How long SQLite's own busy handler waits within one attempt; writes try again, backing off, for minutes
# (kaoshi.store.writes), so that a lock held by another process is waited out without losing the answer.
ATTEMPT_WAIT_S = 1.0


def is_writable(path: Path) -> bool:
    """Whether this process may write the store file and the -wal and -shm files beside it."""
    if not os.access(path, os.W_OK):
        return False
    if os.access(path.parent, os.W_OK | os.X_OK):
        return True
    # a folder that takes no new files still works when the -wal and -shm are there and writable
    return all(os.access(f"{path}{suffix}", os.W_OK) for suffix in ("-wal", "-shm"))


def connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    """An autocommit connection; read-only ones cannot write the file whatever its permissions."""
    if not read_only:
        return sqlite3.connect(path, timeout=ATTEMPT_WAIT_S, isolation_level=None)
    if not path.is_file():
        raise StoreError(f"no store at {path}")
    uri = path.absolute().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=ATTEMPT_WAIT_S, isolation_level=None)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        # A WAL store in a folder where its -shm cannot be made (a read-only file system or folder): what
        # SQLite needs to read the -wal beside the file.
        db.close()
        if not (is_read_only(exc) or is_cannot_open(exc)):
            raise store_error(path, exc) from exc
        return _read_as_it_is(path)
    except sqlite3.DatabaseError:
        pass  # not a database, or damaged: the schema check names it
    return db


def _read_as_it_is(path: Path) -> sqlite3.Connection:
    """A store whose -shm cannot be made, read without one: the file itself when no -wal holds rows (the
    -wal is empty or gone), else a copy of the file and its -wal read in memory."""
    wal = Path(f"{path}-wal")
    if not wal.exists() or wal.stat().st_size == 0:
        _log.warning(
            "%s: read as the file holds it (its folder is read-only, so SQLite's -shm cannot be made)", path
        )
        uri = path.absolute().as_uri()
        return sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, timeout=ATTEMPT_WAIT_S, isolation_level=None
        )
    _log.warning(
        "%s: read from a copy in memory (its folder is read-only and its -wal holds rows not in the file)",
        path,
    )
    # Late import: tempfile (and the random it brings) only for this rare copy, not for every store opened
    import tempfile

    memory = sqlite3.connect(IN_MEMORY, isolation_level=None)
    try:
        with tempfile.TemporaryDirectory(prefix="kaoshi-read-") as folder:
            copy = Path(folder) / "store.sqlite"
            shutil.copyfile(path, copy)
            shutil.copyfile(wal, f"{copy}-wal")
            source = sqlite3.connect(copy)  # a writable copy: SQLite reads its -wal in
            try:
                source.backup(memory)
            finally:
                source.close()
    except sqlite3.DatabaseError as exc:
        memory.close()
        raise store_error(path, exc) from exc
    except OSError as exc:
        memory.close()
        raise StoreError(
            f"{path}: its -wal holds rows that cannot be read here (its folder is read-only and no "
            f"temporary copy could be made: {exc}); copy the store and its -wal to a writable folder"
        ) from exc
    return memory  # a private copy: nothing written to it reaches the store
