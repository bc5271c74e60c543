"""Connecting to a store file: read-write, or read-only (sqlite's mode=ro) for a store this process may not
write."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from kaoshi.store.errors import StoreError, is_read_only, store_error

IN_MEMORY = ":memory:"
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
        # A WAL store in a folder this process cannot add its -shm to: with no -wal there, every committed
        # row is in the file itself, which can then be read as it is.
        db.close()
        if not is_read_only(exc) or Path(f"{path}-wal").exists():
            raise store_error(path, exc) from exc
        db = sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, timeout=ATTEMPT_WAIT_S, isolation_level=None
        )
    except sqlite3.DatabaseError:
        pass  # not a database, or damaged: the schema check names it
    return db
