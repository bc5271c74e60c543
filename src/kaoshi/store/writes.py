"""Writes that outlast a locked store: each is kept in memory until it is committed, so that no paid answer
is dropped because another process held the lock."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kaoshi.store.errors import StoreError, is_busy, is_corrupt, naming_the_file, recover_hint
from kaoshi.store.holders import describe_holders
from kaoshi.store.schema import INSERT_TEXT

# How long a write waits for another process's lock before the store gives up (StoreError).
DEFAULT_LOCK_WAIT_S = 300.0
# Between attempts (each waits opening.ATTEMPT_WAIT_S in SQLite's busy handler) the store backs off.
_FIRST_PAUSE_S = 0.05
_LONGEST_PAUSE_S = 2.0

_log = logging.getLogger("kaoshi")
T = TypeVar("T")


@dataclass(frozen=True)
class PendingWrite:
    sql: str
    params: tuple[Any, ...]
    answer: bool  # a model's answer or a judge's grade: paid for, asked again if lost
    # rows of `texts` the write refers to (schema.TEXT_REFS), written first, in the same transaction
    texts: tuple[tuple[int, bytes, str], ...] = ()


def wait_out_locks(
    path: Path, action: Callable[[], T], started: float, wait_s: float, *, what: str | Callable[[], str]
) -> T:
    """Run `action` until no other process's lock refuses it, backing off until `wait_s` seconds after
    `started` (time.monotonic()); then a StoreError naming the store and the processes that have it open,
    and saying `what` becomes of the work (a callable: what it is once the lock was given up on)."""
    pause = _FIRST_PAUSE_S
    warned = False
    while True:
        try:
            result = action()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc):
                raise
            now = time.monotonic()
            left = started + wait_s - now
            if left <= 0:
                fate = what if isinstance(what, str) else what()
                raise StoreError(
                    f"{path} stayed locked by another process for {now - started:.0f} s "
                    f"({describe_holders(path)}); {fate}"
                ) from exc
            if not warned:
                warned = True
                holders = describe_holders(path)
                _log.warning(
                    "%s is locked by another process (%s); waiting up to %.0f s", path, holders, wait_s
                )
            time.sleep(min(pause, left))
            pause = min(pause * 2, _LONGEST_PAUSE_S)
            continue
        if warned:
            _log.warning("%s is free again after %.0f s", path, time.monotonic() - started)
        return result


def write_transaction(
    db: sqlite3.Connection, path: Path, action: Callable[[], T], lock_wait_s: float, what: str
) -> T:
    """`action` in one write transaction (another process's lock waited out within the lock wait)."""

    def attempt() -> T:
        db.execute("BEGIN IMMEDIATE")
        try:
            result = action()
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return result

    with naming_the_file(path):
        return wait_out_locks(path, attempt, time.monotonic(), lock_wait_s, what=what)


class WriteQueue:
    """The writes of one connection, committed in order; those that could not be committed yet stay queued
    and go first on the next write or flush."""

    def __init__(self, db: sqlite3.Connection, path: Path, lock_wait_s: float) -> None:
        self._db = db
        self._path = path
        self._lock_wait_s = lock_wait_s
        self._pending: list[PendingWrite] = []
        self._stalled_since: float | None = None

    @property
    def unwritten_answers(self) -> int:
        return sum(write.answer for write in self._pending)

    def write(self, sql: str, params: tuple[Any, ...], *, answer: bool = False) -> None:
        """Queue one write and commit everything queued; StoreError, the write kept, when that fails."""
        self.write_all([PendingWrite(sql, params, answer)])

    def write_all(self, writes: Sequence[PendingWrite]) -> None:
        """Queue writes and commit everything queued in one transaction; StoreError when that fails, the
        writes not committed kept (those before a write the store refused are committed)."""
        self._pending.extend(writes)
        self.flush()

    def flush(self, *, closing: bool = False) -> None:
        """Commit every queued write, waiting out another process's lock for at most the lock wait, counted
        from the first refusal (a later flush after giving up tries once more, it does not wait again)."""
        if not self._pending:
            return
        started = self._stalled_since if self._stalled_since is not None else time.monotonic()
        self._stalled_since = started
        try:
            wait_out_locks(
                self._path, self._commit, started, self._lock_wait_s, what=lambda: self._fate(closing)
            )
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            what = self._fate(closing)  # counted after the attempt: what went before a refusal is written
            if is_corrupt(exc):
                raise StoreError(
                    f"{self._path} is damaged ({exc}); {what}; {recover_hint(self._path)}"
                ) from exc
            raise StoreError(f"{self._path}: cannot write ({exc}); {what}") from exc
        self._stalled_since = None

    def discard(self) -> None:
        """Forget what could not be written (the store is closing; the caller has said how much)."""
        self._pending.clear()

    def _commit(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")  # the write lock for the whole batch, or SQLITE_BUSY at once
        try:
            # the texts the writes refer to, all first in one statement (one a write cost a twentieth of
            # the write rate); a write refused midway leaves the texts of the ones after it, which their
            # next attempt finds there
            texts = [text for write in self._pending for text in write.texts]
            if texts:
                self._db.executemany(INSERT_TEXT, texts)
            for index, write in enumerate(self._pending):
                try:
                    self._db.execute(write.sql, write.params)
                except sqlite3.IntegrityError:
                    # a write that can never succeed (a sample of an unknown run): the caller's bug, dropped
                    del self._pending[index]
                    raise
                except sqlite3.OperationalError:
                    # refused midway (a full disk): the writes before it are committed when the transaction
                    # still holds them, so that answers written together are kept as one at a time would be
                    self._commit_first(index)
                    raise
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise
        self._pending.clear()

    def _commit_first(self, count: int) -> None:
        """Commit the transaction holding the first `count` queued writes and drop them from the queue."""
        if count == 0 or not self._db.in_transaction:  # SQLite rolled it back itself
            return
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error:
            return  # rolled back by the caller: every write stays queued
        del self._pending[:count]

    def _fate(self, closing: bool) -> str:
        """What becomes of the queued writes if they cannot be written now."""
        answers = self.unwritten_answers
        others = len(self._pending) - answers
        counted = f"{answers} answer(s)" + (f" and {others} other change(s)" if others else "")
        if closing:
            return f"{counted} could not be written and are lost (the same command, run again, asks again)"
        return f"{counted} not written yet are kept in memory and written by the next write or on close"
