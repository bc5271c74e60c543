"""Run leases: which processes are executing a run (each keeps a heartbeat), and which questions each has
claimed, so that two processes on one run name never pay for the same question."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from kaoshi.store.errors import StoreError, naming_the_file
from kaoshi.store.opening import connect
from kaoshi.store.writes import wait_out_locks

# A holder refreshes its heartbeat this often; one silent for STALE_AFTER_S is taken for dead (a process
# stopped that long, e.g. a suspended laptop, finds its lease taken over and stops before its next request).
HEARTBEAT_S = 5.0
STALE_AFTER_S = 60.0
# Before each request a holder trusts its last heartbeat for this share of STALE_AFTER_S; past it (it was
# paused, or the store stayed locked) it asks the store whether the lease is still its own. The margin
# between the two covers clocks that differ between hosts.
TRUSTED_SHARE = 0.5

_log = logging.getLogger("kaoshi")
T = TypeVar("T")


def this_host() -> str:
    """The name of this host, as the store records the owner of a run or lease."""
    # Late import: socket is asked only of a run still open or being claimed, never by a finished run's report
    import socket

    return socket.gethostname()


def owner_gone(pid: int | None, host: str | None) -> bool:
    """Whether a process is known to be dead: only on this host can it be asked; an unknown pid is alive."""
    if pid is None or host != this_host():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, owned by another user
        return False
    return False


@dataclass(frozen=True)
class LeaseHolder:
    """A process holding a run's lease, as the store records it."""

    holder: str
    pid: int
    host: str
    started_at: float
    heartbeat_at: float

    def gone(self, now: float) -> bool:
        return self.silent(now) or owner_gone(self.pid, self.host)

    def silent(self, now: float) -> bool:
        """No heartbeat for longer than a lease lasts: dead, or paused (another process may take over)."""
        return now - self.heartbeat_at > STALE_AFTER_S

    def describe(self, now: float) -> str:
        """'pid 4242 on host h since 07:31:05 (heartbeat 3 s ago)'."""
        started = time.localtime(self.started_at)
        shown = "%H:%M:%S" if started[:3] == time.localtime(now)[:3] else "%Y-%m-%d %H:%M:%S"
        since = time.strftime(shown, started)
        ago = max(0.0, now - self.heartbeat_at)
        return f"pid {self.pid} on host {self.host} since {since} (heartbeat {ago:.0f} s ago)"

    def describe_silence(self, now: float) -> str:
        """'pid 4242 on host h, no heartbeat for 75 s (paused or unresponsive)'."""
        ago = max(0.0, now - self.heartbeat_at)
        return f"pid {self.pid} on host {self.host}, no heartbeat for {ago:.0f} s (paused or unresponsive)"


class Lease:
    """The lease of a run no other process can see (an in-memory store): every question is this one's."""

    taken_over: tuple[LeaseHolder, ...] = ()

    def claim(self, question_ids: Sequence[str]) -> set[str]:
        """Claim the questions nobody else has claimed; the ones now this process's to ask (those it
        claimed before among them)."""
        return set(question_ids)

    def confirm(self) -> None:
        """Before a request is sent: a StoreError when another process has taken the lease over (this one
        was paused past STALE_AFTER_S), so that it asks nothing the other asks. Cheap while the heartbeat
        is fresh; safe from any thread."""

    def reap(self) -> None:
        """Release the leases and claims of holders that died (their questions can be asked again)."""

    def others_alive(self) -> bool:
        """Whether another live process is executing the run."""
        return False

    def release(self) -> None:
        """Give the lease and the claims back (answered questions are in the samples)."""

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class SharedLease(Lease):
    """This process's lease of a run in a store file, refreshed by a heartbeat thread with its own
    connection. Taken at once (a dead holder's lease is taken over, its claims released); a live holder is
    a StoreError naming it, unless `join`: then both work, each asking only the questions it claimed."""

    def __init__(self, path: Path, run: str, *, join: bool, lock_wait_s: float) -> None:
        self.path = path
        self.run = run
        self.holder = os.urandom(16).hex()  # 32 hex digits, as uuid4().hex (uuid costs its import)
        self._lock_wait_s = lock_wait_s
        # time.time() of the last heartbeat this process wrote (wall clock: it runs on through a suspend)
        self._beaten_at = 0.0
        self._lost = False
        with naming_the_file(path):
            self._db = connect(path, read_only=False)
            self._db.execute("PRAGMA synchronous=NORMAL")
        try:
            self.taken_over = self._transaction(lambda: self._acquire(join), "the run was not started")
        except BaseException:
            self._db.close()
            raise
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name=f"kaoshi-lease-{run}", daemon=True)
        self._beat.start()

    def claim(self, question_ids: Sequence[str]) -> set[str]:
        return self._transaction(lambda: self._claim(question_ids), "no question was claimed")

    def confirm(self) -> None:
        if not self._lost and time.time() - self._beaten_at < TRUSTED_SHARE * STALE_AFTER_S:
            return
        if not self._lost:
            # the heartbeat is overdue: beat now, which finds the lease gone if it was taken over
            db = connect(self.path, read_only=False)  # this thread's own: a backend may send from another
            try:
                with naming_the_file(self.path):
                    wait_out_locks(
                        self.path, lambda: self._write_heartbeat(db), time.monotonic(), self._lock_wait_s,
                        what="no request is sent until it is known whether the lease is still this process's",
                    )  # fmt: skip
            finally:
                db.close()
        if self._lost:
            raise self._taken_over()

    def reap(self) -> None:
        self._transaction(lambda: self._reap(time.time()), "nothing was released")

    def others_alive(self) -> bool:
        now = time.time()
        return any(h.holder != self.holder and not h.gone(now) for h in self._holders())

    def release(self) -> None:
        if self._stop.is_set():
            return
        self._stop.set()
        self._beat.join(timeout=2 * HEARTBEAT_S)
        try:
            self._transaction(self._release, f"its lease is taken over once {STALE_AFTER_S:.0f} s pass")
        except StoreError as exc:  # never hides what ended the run; the lease goes stale on its own
            _log.warning("%s", exc)
        finally:
            self._db.close()

    # -- inside one transaction each -----------------------------------------------------------------------
    def _acquire(self, join: bool) -> tuple[LeaseHolder, ...]:
        now = time.time()
        dead = self._reap(now)
        alive = [h for h in self._holders() if not h.gone(now)]
        if alive and not join:
            more = f" and {len(alive) - 1} other process(es)" if len(alive) > 1 else ""
            raise StoreError(
                f"run {self.run!r} is being run by {alive[0].describe(now)}{more}; wait for it, "
                "or pass --join to answer the questions it has not claimed"
            )
        self._db.execute(
            "INSERT INTO leases (run, holder, pid, host, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?)",
            (self.run, self.holder, os.getpid(), this_host(), now, now),
        )
        self._beaten_at = now
        return dead

    def _reap(self, now: float) -> tuple[LeaseHolder, ...]:
        dead = tuple(h for h in self._holders() if h.holder != self.holder and h.gone(now))
        for holder in dead:
            self._db.execute("DELETE FROM leases WHERE run=? AND holder=?", (self.run, holder.holder))
        # claims of holders no longer leasing (dead, or from before a crash) are free again
        self._db.execute(
            "DELETE FROM claims WHERE run=? AND holder NOT IN (SELECT holder FROM leases WHERE run=?)",
            (self.run, self.run),
        )
        return dead

    def _claim(self, question_ids: Sequence[str]) -> set[str]:
        held = self._db.execute(
            "SELECT 1 FROM leases WHERE run=? AND holder=?", (self.run, self.holder)
        ).fetchone()
        if held is None:
            self._lost = True
            raise self._taken_over()
        now = time.time()
        claimed = set()
        for question_id in question_ids:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO claims (run, question_id, holder, claimed_at) VALUES (?, ?, ?, ?)",
                (self.run, question_id, self.holder, now),
            )
            if cursor.rowcount == 1 or self._holds(question_id):
                claimed.add(question_id)
        return claimed

    def _holds(self, question_id: str) -> bool:
        """Whether this process claimed the question before (its claim stands: it is still its own)."""
        row = self._db.execute(
            "SELECT 1 FROM claims WHERE run=? AND question_id=? AND holder=?",
            (self.run, question_id, self.holder),
        ).fetchone()
        return row is not None

    def _taken_over(self) -> StoreError:
        return StoreError(
            f"run {self.run!r}: this process's lease was taken over after {STALE_AFTER_S:.0f} s without "
            "a heartbeat (was it suspended?); stopped so that no question is asked twice: run the same "
            "command with --join to go on"
        )

    def _write_heartbeat(self, db: sqlite3.Connection) -> None:
        """Refresh the heartbeat (autocommit); a lease no longer in the store was taken over."""
        now = time.time()
        cursor = db.execute(
            "UPDATE leases SET heartbeat_at=? WHERE run=? AND holder=?", (now, self.run, self.holder)
        )
        if cursor.rowcount == 0:
            self._lost = True
        else:
            self._beaten_at = max(self._beaten_at, now)

    def _release(self) -> None:
        self._db.execute("DELETE FROM claims WHERE run=? AND holder=?", (self.run, self.holder))
        self._db.execute("DELETE FROM leases WHERE run=? AND holder=?", (self.run, self.holder))

    def _holders(self) -> list[LeaseHolder]:
        with naming_the_file(self.path):
            rows = self._db.execute(
                "SELECT holder, pid, host, started_at, heartbeat_at FROM leases WHERE run=? "
                "ORDER BY started_at",
                (self.run,),
            ).fetchall()
        return [LeaseHolder(*row) for row in rows]

    def _transaction(self, action: Callable[[], T], what: str) -> T:
        """`action` in one write transaction, another process's lock waited out within the lock wait."""

        def attempt() -> T:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = action()
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            return result

        with naming_the_file(self.path):
            return wait_out_locks(self.path, attempt, time.monotonic(), self._lock_wait_s, what=what)

    # -- the heartbeat thread --------------------------------------------------------------------------
    def _heartbeat(self) -> None:
        db = connect(self.path, read_only=False)  # a connection is not to be shared between threads
        try:
            while not self._stop.wait(HEARTBEAT_S) and not self._lost:
                try:
                    self._write_heartbeat(db)
                except sqlite3.Error as exc:  # locked for a moment: the next beat is well within the timeout
                    _log.debug("lease heartbeat of run %r skipped: %s", self.run, exc)
        finally:
            db.close()
