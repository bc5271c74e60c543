"""The provider batches a run sent (kaoshi run --batch, kaoshi.runner.batching), kept with the run so that a
process killed while it waits, or a laptop closed for the night, polls the same batches again and never
sends a question twice.

A batch is written in two steps around the call that creates it: first its input file with the requests
in it (`creating`), then the provider's batch id. A process killed between the two leaves a `creating`
row; the next one looks the batch up among the provider's (its metadata names the input file) and either
records it or, where none was made, sends the file. A batch is `collected` once its answers are stored.

A batch has a role: the run's own questions (`model`), the LLM extractor's calls about its unparsed
answers (`extractor`), or the calls a judge makes on its answers (`judge:GRADER`, kaoshi judge --batch)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any, Protocol

CREATING = "creating"  # the input file is uploaded; the batch may or may not have been made
MODEL = "model"  # the role of the batches that ask a run's questions
EXTRACTOR = "extractor"  # and of those that ask the LLM extractor about answers the rules left unparsed


@dataclass(frozen=True)
class BatchRecord:
    """One batch of a run as the store keeps it."""

    run: str
    role: str  # MODEL, or `judge:GRADER`
    input_file: str  # the provider's id of the uploaded input file: the batch's key in the store
    batch_id: str | None  # None while `creating`
    endpoint: str  # where it was sent (the base URL, without credentials)
    requests: tuple[str, ...]  # the request ids (question#sample) in its input file
    status: str  # the provider's last word on it, or `creating`
    submitted_at: float
    collected_at: float | None

    @property
    def creating(self) -> bool:
        return self.batch_id is None


class _Writes(Protocol):
    """What the book reads and writes through: the store it belongs to (kaoshi.store.sqlite.Store)."""

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

    def _write(self, sql: str, params: tuple[Any, ...], *, answer: bool = False) -> None: ...

    def flush(self) -> None: ...


class BatchBook:
    """The batches of a store's runs: written at once (each change committed before the run goes on)."""

    def __init__(self, store: _Writes) -> None:
        self._store = store

    def store_id(self) -> str:
        """This store's own id, made the first time it is asked for: it tells a provider's batches sent
        from this store from those of another store with a run of the same name."""
        rows = self._store._query("SELECT value FROM meta WHERE key='store_id'")
        if rows:
            return str(rows[0][0])
        made = os.urandom(16).hex()  # 32 hex digits, as uuid4().hex (uuid costs its import)
        self._store._write("INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?)", (made,))
        self._store.flush()
        return str(self._store._query("SELECT value FROM meta WHERE key='store_id'")[0][0])

    def creating(
        self, run: str, role: str, input_file: str, endpoint: str, requests: tuple[str, ...]
    ) -> BatchRecord:
        """An input file is uploaded and its batch is about to be made: the row, as written."""
        record = BatchRecord(run, role, input_file, None, endpoint, requests, CREATING, time.time(), None)
        self._store._write(
            "INSERT INTO batches (run, role, input_file, batch_id, endpoint, requests, status, submitted_at) "
            "VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
            (run, role, input_file, endpoint, json.dumps(list(requests)), CREATING, record.submitted_at),
        )
        self._store.flush()
        return record

    def created(self, run: str, input_file: str, batch_id: str, status: str) -> None:
        self._store._write(
            "UPDATE batches SET batch_id=?, status=? WHERE run=? AND input_file=?",
            (batch_id, status, run, input_file),
        )
        self._store.flush()

    def status(self, run: str, input_file: str, status: str) -> None:
        self._store._write(
            "UPDATE batches SET status=? WHERE run=? AND input_file=?", (status, run, input_file)
        )
        self._store.flush()

    def collected(self, run: str, input_file: str, status: str) -> None:
        """The batch's answers are stored (after they are committed: a kill before this reads it again)."""
        self._store._write(
            "UPDATE batches SET status=?, collected_at=? WHERE run=? AND input_file=?",
            (status, time.time(), run, input_file),
        )
        self._store.flush()

    def never_made(self, run: str, input_file: str) -> None:
        """A `creating` batch the provider does not have: its requests are sent again."""
        self._store._write(
            "DELETE FROM batches WHERE run=? AND input_file=? AND batch_id IS NULL", (run, input_file)
        )
        self._store.flush()

    def of_run(self, run: str, role: str = MODEL, *, open_only: bool = False) -> list[BatchRecord]:
        """The run's batches of a role in the order they were sent; `open_only`: those not yet collected."""
        if not self._has_table():
            return []
        where = " AND collected_at IS NULL" if open_only else ""
        rows = self._store._query(
            "SELECT run, role, input_file, batch_id, endpoint, requests, status, submitted_at, collected_at "
            f"FROM batches WHERE run=? AND role=?{where} ORDER BY submitted_at, rowid",
            (run, role),
        )
        return [
            BatchRecord(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5])), r[6], r[7], r[8]) for r in rows
        ]

    def waiting(self, role: str | None = None) -> dict[str, tuple[int, int]]:
        """Each run with batches not yet collected (of `role`; None: of any): (batches, requests in them)."""
        if not self._has_table():
            return {}
        where = "" if role is None else " AND role = ?"
        rows = self._store._query(
            "SELECT run, COUNT(*), TOTAL(json_array_length(requests)) FROM batches "
            f"WHERE collected_at IS NULL{where} GROUP BY run",
            () if role is None else (role,),
        )
        return {row[0]: (int(row[1]), int(row[2])) for row in rows}

    def _has_table(self) -> bool:
        """A store opened read-only from before batches has no such table (nothing is waiting)."""
        rows = self._store._query("SELECT 1 FROM sqlite_master WHERE type='table' AND name='batches'")
        return bool(rows)
