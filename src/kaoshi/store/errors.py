"""StoreError, and SQLite's errors told apart and turned into messages that name the store file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class StoreError(Exception):
    """The store cannot do what was asked (unknown run, spec mismatch, not a kaoshi store)."""


def _error_name(exc: sqlite3.Error) -> str:
    # sqlite_errorname is Python 3.11+; before it only the message tells the kinds apart
    name = getattr(exc, "sqlite_errorname", None)
    if isinstance(name, str):
        return name
    text = str(exc).lower()
    for words, guessed in (
        ("database is locked", "SQLITE_BUSY"),
        ("database table is locked", "SQLITE_LOCKED"),
        ("malformed", "SQLITE_CORRUPT"),
        ("file is not a database", "SQLITE_NOTADB"),
        ("readonly database", "SQLITE_READONLY"),
        ("unable to open database file", "SQLITE_CANTOPEN"),
    ):
        if words in text:
            return guessed
    return "SQLITE_ERROR"


def is_busy(exc: sqlite3.Error) -> bool:
    """Another connection holds the lock this one needs: waiting may help."""
    return _error_name(exc).startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))


def is_corrupt(exc: sqlite3.Error) -> bool:
    return _error_name(exc).startswith("SQLITE_CORRUPT")


def is_not_a_database(exc: sqlite3.Error) -> bool:
    return _error_name(exc).startswith("SQLITE_NOTADB")


def is_read_only(exc: sqlite3.Error) -> bool:
    return _error_name(exc).startswith("SQLITE_READONLY")


def is_cannot_open(exc: sqlite3.Error) -> bool:
    """A file SQLite cannot open: on a read-only file system, the -shm of a WAL store it cannot make."""
    return _error_name(exc).startswith("SQLITE_CANTOPEN")


def recover_hint(path: Path) -> str:
    """How to copy what is still readable out of a damaged store into a new file, and use it."""
    rescued = path.with_name(f"{path.stem}-recovered{path.suffix or '.sqlite'}")
    return (
        f"recover what is readable with `sqlite3 {path} .recover | sqlite3 {rescued}` (an sqlite3 from "
        f"sqlite.org: some Linux builds lack .recover) and pass --store {rescued}"
    )


def store_error(path: Path, exc: sqlite3.Error) -> StoreError:
    """A StoreError naming the file for an SQLite failure that is the file's state, not a bug."""
    if is_corrupt(exc):
        return StoreError(f"{path} is damaged ({exc}); {recover_hint(path)}")
    if is_not_a_database(exc):
        return StoreError(
            f"{path} is not a usable kaoshi store (not an SQLite database, or its header is damaged); "
            "left it untouched"
        )
    return StoreError(f"{path}: {exc}")


@contextmanager
def naming_the_file(path: Path) -> Iterator[None]:
    """SQLite failures that are the file's state (damaged, locked, unreadable) become StoreErrors naming
    it; IntegrityError and the like, a caller's bug, pass as they are."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        raise store_error(path, exc) from exc
    except sqlite3.DatabaseError as exc:
        if type(exc) is not sqlite3.DatabaseError:
            raise
        raise store_error(path, exc) from exc
