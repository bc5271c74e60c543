"""The embedded SQLite store (WAL): every response is committed the moment it arrives."""

from __future__ import annotations

import contextlib
import heapq
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kaoshi.store.aggregates import RunCounts, extractor_usage, run_counts, run_usage
from kaoshi.store.columns import (
    Kind,
    OutputRow,
    ScoreRow,
    answer_keys,
    keep_questions,
    narrowed_kinds,
    outcome_keys,
    output_counts,
    pair_keys,
    score_kinds,
    score_rows,
    unlike_questions,
)
from kaoshi.store.errors import StoreError, naming_the_file
from kaoshi.store.leases import Lease, LeaseHolder, SharedLease, this_host
from kaoshi.store.opening import IN_MEMORY, connect, is_writable
from kaoshi.store.pairing import AnswerRow, KeyRow
from kaoshi.store.records import (
    GradeRecord,
    RunRecord,
    RunSpec,
    RunStatus,
    SampleRecord,
    SampleStatus,
)
from kaoshi.store.rows import (
    GRADE_COLUMNS,
    RUN_QUERY,
    SAMPLE_COLUMNS,
    dumps,
    grade_from_row,
    run_from_row,
    sample_from_row,
    sample_write,
)
from kaoshi.store.schema import (
    REQUEST_INDEXES,
    SCHEMA_VERSION,
    add_reading_stand_ins,
    create_missing_tables,
    missing_columns,
    select_list,
    stored_schema_version,
    stored_text,
)
from kaoshi.store.summaries import (
    KeptSummary,
    Signature,
    keep_summaries,
    keeps_summaries,
    kept_summaries,
    run_signature,
)
from kaoshi.store.writes import DEFAULT_LOCK_WAIT_S, WriteQueue, wait_out_locks

# What only some commands do to a store is imported where it is done: removing and renaming runs, and the
# provider batches of `kaoshi run --batch`.
if TYPE_CHECKING:
    from kaoshi.store.batches import BatchBook
    from kaoshi.store.run_admin import RemovedRun, RenamedRun

__all__ = ["DEFAULT_LOCK_WAIT_S", "SCHEMA_VERSION", "Store", "StoreError"]
# The order runs are listed in: oldest first, runs made in the same instant in the order they were made.
_OLDEST_FIRST = "ORDER BY created_at, rowid"
_FOR_READING = "opened for reading"
# How long keeping a summary waits for another process's write lock before it keeps nothing: a reader does
# not wait on a run's writes for what it has already counted.
_KEEP_WAIT_S = 0.25
_log = logging.getLogger("kaoshi")


class _Selects(NamedTuple):
    """The select lists of a store's tables (schema.select_list)."""

    sample: str
    repeat: str
    light: str
    grade: str


class Store:
    """A kaoshi store file: runs with their frozen specs, samples and grades. Every write is committed at
    once; one refused by another process's lock waits in memory (up to `lock_wait_s`) rather than being
    dropped. `read_only` (or a file this process may not write) opens it with sqlite's mode=ro."""

    def __init__(
        self, path: str | Path, *, read_only: bool = False, lock_wait_s: float = DEFAULT_LOCK_WAIT_S
    ) -> None:
        self.path = Path(path)
        in_memory = str(path) == IN_MEMORY
        # the file as opened, whatever the working folder becomes: what every second connection to it opens
        # (a lease's, keeping a summary from a store opened read-only, a vote's reader)
        self.file = self.path if in_memory else Path(os.path.abspath(self.path))
        exists = not in_memory and self.path.exists()
        if read_only and not exists:
            raise StoreError(f"no store at {self.path}")
        self._read_only_reason: str | None = _FOR_READING if read_only else None
        if self._read_only_reason is None and exists and not is_writable(self.path):
            # reading commands still work on a store shared read-only; writes say why they cannot
            self._read_only_reason = (
                "it is on a read-only file system"
                if _on_read_only_file_system(self.path)
                else "no permission to write it or its folder"
            )
        if not self.read_only and not in_memory:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_wait_s = lock_wait_s
        with naming_the_file(self.path):
            self._db = connect(self.path, read_only=self.read_only)
        self._writes = WriteQueue(self._db, self.path, lock_wait_s)
        try:
            self._prepare()
            self._selects: tuple[int, _Selects] | None = None
        except BaseException:
            self._db.close()
            raise

    @property
    def _select(self) -> _Selects:
        """What a read selects of each table, as the file's tables are now: made again when they changed
        since (a store read here while another process opened it for writing and added columns: its rows
        written since hold their texts in `texts`)."""
        with naming_the_file(self.path):
            version = self._db.execute("PRAGMA schema_version").fetchone()[0]
            if self._selects is None or self._selects[0] != version:
                selects = _Selects(
                    select_list(self._db, "samples", SAMPLE_COLUMNS),
                    select_list(self._db, "repeat_samples", SAMPLE_COLUMNS),
                    select_list(self._db, "samples", SAMPLE_COLUMNS, light=True),
                    select_list(self._db, "grades", GRADE_COLUMNS),
                )
                self._selects = (version, selects)
            return self._selects[1]

    @property
    def read_only(self) -> bool:
        return self._read_only_reason is not None

    def _prepare(self) -> None:
        stored_schema_version(self._db, self.path)  # refuses another program's file before any write
        with naming_the_file(self.path):
            if self.read_only:
                add_reading_stand_ins(self._db)
                return
            wait_out_locks(
                self.path,
                self._set_up_for_writing,
                time.monotonic(),
                self._lock_wait_s,
                what="it could not be opened for writing",
            )

    def _set_up_for_writing(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a killed process loses nothing committed; only a power cut may.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        # An answer or grade replaced (INSERT OR REPLACE) then fires the DELETE triggers that keep kept
        # summaries true (schema.SUMMARY_TRIGGERS): without it only the new row's larger rowid tells, and
        # a dump and restore numbers the rows again. A new row deletes nothing and fires nothing.
        self._db.execute("PRAGMA recursive_triggers=ON")
        create_missing_tables(self._db)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Store]:
        """Reads that agree: every read inside sees the store as its first one does (one read transaction),
        whatever another process writes meanwhile; for what is made of several reads of a run being
        written (kaoshi html reads a run's summary and its samples twice). What this store has queued is
        written first; nothing may be written inside."""
        if self._db.in_transaction:  # inside another snapshot: its reads already agree
            yield self
            return
        self._writes.flush()
        with naming_the_file(self.path):
            self._db.execute("BEGIN")
        try:
            yield self
        finally:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")  # nothing was written: the read transaction ends

    def close(self) -> None:
        """Write what is still queued (a lock is waited out within the lock wait) and close; a StoreError
        says how many answers could not be written."""
        try:
            self._writes.flush(closing=True)
        except KeyboardInterrupt as exc:
            lost = self._writes.unwritten_answers
            raise StoreError(
                f"{self.path}: interrupted while waiting to write; {lost} answer(s) could not be written "
                "and are lost (the same command, run again, asks again)"
            ) from exc
        finally:
            self._writes.discard()
            self._db.close()

    def drop_queued(self) -> None:
        """Forget the writes still queued, unwritten: for a caller that removes what they were part of (a
        vote stopped part way, whose samples no model was asked for), so that closing the store does not
        wait on a lock to write them, nor report them lost."""
        self._writes.discard()

    def flush(self) -> None:
        """Commit the writes still queued, waiting out another process's lock within the lock wait; a
        StoreError says how many answers wait in memory."""
        self._writes.flush()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs ---------------------------------------------------------------------------------------------
    def check_resumable(self, name: str, spec: RunSpec, ignore: frozenset[str] = frozenset()) -> None:
        """Refuse (StoreError naming what differs) when a run of this name exists with another spec.

        `ignore`: fields not known yet (a backend's default chat form before its weights load)."""
        existing = self.find_run(name)
        if existing is None:
            return
        diffs = [d for d in existing.spec.differences(spec) if d[0] not in ignore]
        if diffs:
            detail = "; ".join(f"{field}: stored {old!r}, now {new!r}" for field, old, new in diffs)
            raise StoreError(
                f"run {name!r} already exists with a different spec ({detail}); "
                "choose another --run-name to start a new run"
            )

    def open_run(self, name: str, spec: RunSpec) -> RunRecord:
        """Create the run, or resume it when the stored spec matches; StoreError names what differs."""
        existing = self.find_run(name)
        if existing is not None:
            self.check_resumable(name, spec)
            self._write(
                "UPDATE runs SET status=?, finished_at=NULL WHERE name=?", (RunStatus.RUNNING.value, name)
            )
            self._claim(name)
            return self.get_run(name)
        self._write(
            "INSERT INTO runs (name, spec, benchmark, model, fingerprint, status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                dumps(spec.to_json()),
                spec.benchmark,
                spec.model,
                spec.fingerprint,
                RunStatus.RUNNING.value,
                time.time(),
            ),
        )
        self._claim(name)
        return self.get_run(name)

    def _claim(self, name: str) -> None:
        self._write(
            "INSERT OR REPLACE INTO run_owners (run, pid, host, opened_at) VALUES (?, ?, ?, ?)",
            (name, os.getpid(), this_host(), time.time()),
        )

    def hold(self, name: str, *, join: bool = False) -> Lease:
        """This process's lease of a run, to be released (a context manager); StoreError naming the live
        holder when another process executes it, unless `join` (then each asks only what it claimed)."""
        if self._read_only_reason is not None:
            raise StoreError(f"{self.path} is open read-only ({self._read_only_reason}): cannot write to it")
        if str(self.path) == IN_MEMORY:
            return Lease()  # no other process can see it
        self._writes.flush()  # the lease's own connection must not wait on this one's queued writes
        return SharedLease(self.file, name, join=join, lock_wait_s=self._lock_wait_s)

    def interrupt_run(self, name: str) -> None:
        """Mark a run stopped before its end (Ctrl-C); running it again resumes it."""
        self._write(
            "UPDATE runs SET status=? WHERE name=? AND status=?",
            (RunStatus.INTERRUPTED.value, name, RunStatus.RUNNING.value),
        )

    def finish_run(self, name: str) -> None:
        self._write(
            "UPDATE runs SET status=?, finished_at=? WHERE name=?",
            (RunStatus.FINISHED.value, time.time(), name),
        )

    def find_run(self, name: str) -> RunRecord | None:
        rows = self._query(RUN_QUERY + " WHERE name=?", (name,))
        return run_from_row(rows[0], self._lease_holders(name), self.path) if rows else None

    def get_run(self, name: str) -> RunRecord:
        found = self.find_run(name)
        if found is None:
            known = ", ".join(r.name for r in self.runs()) or "none"
            raise StoreError(f"no run named {name!r} in {self.path} (runs: {known})")
        return found

    def run_names(self) -> list[str]:
        """Every run's name, oldest first, as `runs` lists them (their samples not counted)."""
        return [row[0] for row in self._query(f"SELECT name FROM runs {_OLDEST_FIRST}")]

    def runs(self) -> list[RunRecord]:
        rows = self._query(f"{RUN_QUERY} {_OLDEST_FIRST}")
        holders = self._lease_holders()
        return [run_from_row(row, holders, self.path) for row in rows]

    def remove_runs(self, names: Sequence[str], *, dry_run: bool = False) -> tuple[RemovedRun, ...]:
        """Delete the named runs with their samples, grades, owners and leases in one transaction;
        StoreError, nothing removed, for an unknown name or a run a live process holds. `dry_run`: check
        and count only."""
        self._ready_to_change()
        # Late import: removing runs (`kaoshi runs rm`), which no reading command does
        from kaoshi.store.run_admin import remove_runs

        return remove_runs(self._db, self.path, names, lock_wait_s=self._lock_wait_s, dry_run=dry_run)

    def rename_run(self, old: str, new: str) -> RenamedRun:
        """Rename a run in every table that names it (one transaction); StoreError, nothing changed, for an
        unknown `old`, an existing `new` or a run a live process holds."""
        self._ready_to_change()
        # Late import: renaming runs (`kaoshi runs mv`), which no reading command does
        from kaoshi.store.run_admin import rename_run

        return rename_run(self._db, self.path, old, new, lock_wait_s=self._lock_wait_s)

    def _ready_to_change(self) -> None:
        if self._read_only_reason is not None:
            raise StoreError(f"{self.path} is open read-only ({self._read_only_reason}): cannot write to it")
        self._writes.flush()  # queued answers go in first: a removal or rename sees every row

    def _lease_holders(self, run: str | None = None) -> dict[str, list[LeaseHolder]]:
        """The processes holding each run's lease (of one run, or of all)."""
        query = "SELECT run, holder, pid, host, started_at, heartbeat_at FROM leases"
        rows = self._query(query + " WHERE run=?", (run,)) if run is not None else self._query(query)
        found: dict[str, list[LeaseHolder]] = {}
        for name, *holder in rows:
            found.setdefault(name, []).append(LeaseHolder(*holder))
        return found

    # -- samples ------------------------------------------------------------------------------------------
    def finished_ids(self, run: str) -> set[str]:
        """Questions whose (first) response is stored; errored samples are not finished and are tried
        again."""
        rows = self._query(
            "SELECT question_id FROM samples WHERE run=? AND status != ?", (run, SampleStatus.ERROR.value)
        )
        return {row[0] for row in rows}

    def sample_ids(self, run: str) -> set[str]:
        """Questions with a stored sample, errored ones included (a run is finished when all have one)."""
        return {row[0] for row in self._query("SELECT question_id FROM samples WHERE run=?", (run,))}

    def finished_keys(self, run: str) -> set[tuple[str, int]]:
        """(question id, sample index) of every stored response but errors, the repeats' included."""
        error = SampleStatus.ERROR.value
        rows = self._query(
            "SELECT question_id, 0 FROM samples WHERE run=? AND status != ? "
            "UNION ALL SELECT question_id, sample FROM repeat_samples WHERE run=? AND status != ?",
            (run, error, run, error),
        )
        return {(question_id, sample) for question_id, sample in rows}

    def sample_keys(self, run: str) -> set[tuple[str, int]]:
        """(question id, sample index) of every stored sample, errors and the repeats' included."""
        rows = self._query(
            "SELECT question_id, 0 FROM samples WHERE run=? "
            "UNION ALL SELECT question_id, sample FROM repeat_samples WHERE run=?",
            (run, run),
        )
        return {(question_id, sample) for question_id, sample in rows}

    def add_sample(self, run: str, sample: SampleRecord) -> None:
        """Write one sample and commit it; a later write for the same question (and sample) replaces it.
        When the store stays locked past the lock wait: StoreError, the sample kept for the next write or
        close."""
        self.add_samples(run, [sample])

    def add_samples(self, run: str, samples: Sequence[SampleRecord]) -> None:
        """add_sample for several samples, committed in one transaction (answers that came together)."""
        if self._read_only_reason is not None:
            raise StoreError(f"{self.path} is open read-only ({self._read_only_reason}): cannot write to it")
        self._writes.write_all([sample_write(run, sample, time.time()) for sample in samples])

    @property
    def unwritten_answers(self) -> int:
        """Answers kept in memory because the store refused them (written by the next write or on close)."""
        return self._writes.unwritten_answers

    @property
    def batches(self) -> BatchBook:
        """The provider batches the store's runs sent (kaoshi run --batch; kaoshi.store.batches)."""
        # Late import: the provider batches, which `kaoshi report` never reads
        from kaoshi.store.batches import BatchBook

        return BatchBook(self)

    # -- grades of open answers ------------------------------------------------------------------------
    def add_grade(self, run: str, grade: GradeRecord) -> None:
        """Write one grade and commit it (kept in memory, like a sample, while the store is locked); a later
        grade by the same grader replaces it."""
        self._write(
            "INSERT OR REPLACE INTO grades (run, question_id, grader, status, score, points, rounds, "
            "prompt_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                grade.question_id,
                grade.grader,
                grade.status,
                grade.score,
                grade.points,
                dumps(list(grade.rounds)),
                grade.prompt_version,
                time.time(),
            ),
            answer=True,
        )

    def grades(self, run: str, grader: str) -> dict[str, GradeRecord]:
        rows = self._query(f"SELECT {self._select.grade} FROM grades WHERE run=? AND grader=?", (run, grader))
        return {row[0]: grade_from_row(row, self.path, run) for row in rows}

    def graders(self, run: str) -> list[str]:
        """The graders that have graded this run, oldest first."""
        rows = self._query(
            "SELECT grader FROM grades WHERE run=? GROUP BY grader ORDER BY MIN(created_at)", (run,)
        )
        return [row[0] for row in rows]

    def samples(self, run: str, *, light: bool = False) -> list[SampleRecord]:
        return list(self.iter_samples(run, light=light))

    def run_counts(self) -> dict[str, tuple[RunCounts, RunCounts]]:
        """Every run's counts (first samples, other samples), counted by SQLite (kaoshi runs)."""
        with naming_the_file(self.path):
            return run_counts(self._db)

    def run_usage(self, run: str) -> tuple[int, ...]:
        """The tokens of the run's samples, summed by SQLite (kaoshi.store.aggregates.run_usage)."""
        with naming_the_file(self.path):
            return run_usage(self._db, run)

    def extractor_usage(self, run: str) -> tuple[int, ...]:
        """The tokens of the LLM extractor's calls about the run's answers (aggregates.extractor_usage)."""
        with naming_the_file(self.path):
            return extractor_usage(self._db, run)

    def iter_samples(
        self, run: str, *, light: bool = False, status: SampleStatus | None = None
    ) -> Iterator[SampleRecord]:
        """The run's samples, one a question (its first, for a run of k samples a question). `light`:
        without what a summary never reads (schema.LIGHT_COLUMNS: the prompt, the model's text but where
        it was cut off, ...), for the commands that show numbers and not samples. `status`: only those."""
        columns = self._select.light if light else self._select.sample
        where, params = ("run=?", (run,)) if status is None else ("run=? AND status=?", (run, status.value))
        query = f"SELECT {columns} FROM samples WHERE {where} ORDER BY position, rowid"
        with naming_the_file(self.path):
            for row in self._db.execute(query, params):
                yield sample_from_row(row, self.path, run)

    def score_rows(
        self, run: str, grader: str | None = None, *, repeats: bool = False, text_end: int
    ) -> list[ScoreRow]:
        """What the run's numbers are made of, one small row a sample (kaoshi.store.columns.score_rows):
        its first samples, or with `repeats` its samples after the first."""
        with naming_the_file(self.path):
            return list(score_rows(self._db, self.path, run, grader, repeats=repeats, text_end=text_end))

    def score_kinds(
        self, run: str, grader: str | None, open_types: Collection[str], *, kept: bool = False
    ) -> list[Kind] | None:
        """The run's first samples counted by kind (kaoshi.store.columns.score_kinds; `kept`: only the
        questions keep_questions holds); None for a run with rows from before the group column."""
        with naming_the_file(self.path):
            return score_kinds(self._db, self.path, run, grader, open_types, kept=kept)

    def narrowed_kinds(self, run: str, whole: Sequence[Kind], left_out: Collection[str]) -> list[Kind] | None:
        """score_kinds with `kept` (no grader) from the run's kinds counted whole less its `left_out`
        questions' (kaoshi.store.columns.narrowed_kinds); None where they cannot be."""
        with naming_the_file(self.path):
            return narrowed_kinds(self._db, self.path, run, whole, left_out)

    def outcome_keys(self, run: str, *, kept: bool = False) -> dict[tuple[str, str], float]:
        """(question id, fingerprint) -> 1.0 / 0.0 for each checked answer (kaoshi.store.columns)."""
        with naming_the_file(self.path):
            return outcome_keys(self._db, run, kept=kept)

    def pair_keys(
        self, run: str, grader: str | None, open_types: Collection[str], *, ordered: bool = True
    ) -> list[KeyRow] | None:
        """The run's first samples as pairing reads them (kaoshi.store.columns.pair_keys)."""
        with naming_the_file(self.path):
            return pair_keys(self._db, run, grader, open_types, ordered=ordered)

    def unlike_questions(self, run: str, other: str) -> list[tuple[str, str | None, str | None]]:
        """The questions both runs hold whose stored question texts may differ, with both texts
        (kaoshi.store.columns.unlike_questions)."""
        with naming_the_file(self.path):
            return unlike_questions(self._db, run, other)

    def answer_keys(
        self,
        run: str,
        grader: str | None,
        open_types: Collection[str],
        *,
        ordered: bool = True,
        among: Sequence[str] | None = None,
    ) -> list[AnswerRow] | None:
        """pair_keys with each answer, gold and question type (kaoshi.store.columns.answer_keys; `among`:
        only those questions)."""
        with naming_the_file(self.path):
            return answer_keys(self._db, self.path, run, grader, open_types, ordered=ordered, among=among)

    def keep_questions(self, question_ids: Iterable[str]) -> None:
        """The questions score_kinds and outcome_keys read with `kept` (a table of this connection)."""
        with naming_the_file(self.path):
            keep_questions(self._db, question_ids)

    def output_counts(
        self, run: str, text_end: int, *, kept: bool = False, left_out: Collection[str] | None = None
    ) -> tuple[list[tuple[OutputRow, int]], list[float]]:
        """The samples as the output profile counts them, and the answers' latencies
        (kaoshi.store.columns.output_counts; `kept`: only the questions keep_questions holds; `left_out`:
        only those first samples)."""
        with naming_the_file(self.path):
            return output_counts(self._db, run, text_end, kept=kept, left_out=left_out)

    # -- what reading commands counted, kept (kaoshi.store.summaries) --------------------------------------
    def kept_summaries(self, kind: str, runs: Collection[str]) -> dict[str, KeptSummary]:
        """The runs' kept summaries of `kind`, each saying whether the run's rows are still those counted."""
        with naming_the_file(self.path):
            return kept_summaries(self._db, kind, runs)

    def summary_kinds(self, run: str) -> set[str]:
        """The kinds of the run's kept summaries (none in a store from before them)."""
        if not self.keeps_summaries():
            return set()
        return {row[0] for row in self._query("SELECT kind FROM run_summaries WHERE run = ?", (run,))}

    def keeps_summaries(self) -> bool:
        """Whether the store has the triggers a kept summary relies on (a store from before them keeps
        none: kaoshi.store.summaries)."""
        with naming_the_file(self.path):
            return keeps_summaries(self._db)

    def summary_signatures(self, runs: Iterable[str]) -> dict[str, Signature]:
        """Each run's signature now: read before counting what is to be kept."""
        with naming_the_file(self.path):
            return {run: run_signature(self._db, run) for run in runs}

    def keep_summaries(
        self, kind: str, counted: Mapping[str, tuple[Signature, Any]], *, alone: bool = False
    ) -> bool:
        """Keep what a reading command counted of runs (kaoshi.store.summaries.keep_summaries; `alone`:
        the only summary of each run with the kind's first word) in one short write: through this store
        when it is open for writing; when it was opened for reading, through a connection of its own if
        this process may write the file; never to a store that cannot be written. Another process's lock
        is waited for briefly at most: then, or on any failure, nothing is kept (False), and the next
        reader counts again."""
        if self._read_only_reason is None:
            return _kept_quietly(self.path, lambda: keep_summaries(self._db, kind, counted, alone=alone))
        writable = str(self.path) != IN_MEMORY and is_writable(self.path)
        if self._read_only_reason != _FOR_READING or not writable:
            return False

        def keep() -> bool:
            db = sqlite3.connect(self.file, timeout=_KEEP_WAIT_S, isolation_level=None)
            try:
                kept = keep_summaries(db, kind, counted, alone=alone)
                if kept:
                    # the reader's connection outlives this one, and a read-only one never checkpoints:
                    # without this what was kept stays in a -wal beside the store (`kaoshi store check`
                    # then asks to copy it with the file). Another process reading or writing the store
                    # makes it give up after the short wait: that process's last connection checkpoints.
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                return kept
            finally:
                db.close()

        return _kept_quietly(self.path, keep)

    def iter_repeat_samples(self, run: str) -> Iterator[SampleRecord]:
        """The run's samples after each question's first (kaoshi run --repeats), by question and sample."""
        query = (
            f"SELECT sample, {self._select.repeat} FROM repeat_samples WHERE run=? ORDER BY position, sample"
        )
        with naming_the_file(self.path):
            for sample, *row in self._db.execute(query, (run,)):
                yield sample_from_row(tuple(row), self.path, run, sample)

    def cached_answers(
        self, keys: Sequence[int], excluding: str | None = None
    ) -> dict[int, tuple[str, SampleRecord]]:
        """The stored answers (no errors) to requests of these keys (kaoshi.runner.cache), each with its
        run: the most recent of each key, from any run but `excluding`. A store from before the column
        has none."""
        found: dict[int, tuple[str, SampleRecord]] = {}
        if not keys or any(c[0] == "request_key" for c in missing_columns(self._db, "samples")):
            return found
        if self._read_only_reason is None:  # the index a lookup reads, made the first time one is made
            with naming_the_file(self.path):
                for ddl in REQUEST_INDEXES.values():
                    self._db.execute(ddl)
        wanted = "(SELECT value FROM json_each(?))"
        for table, select, extra in (
            ("samples", self._select.sample, "0"),
            ("repeat_samples", self._select.repeat, "sample"),
        ):
            prompt = stored_text(self._db, table, "prompt")
            query = (
                f"SELECT run, {extra}, {select} FROM {table} WHERE request_key IN {wanted} "
                f"AND status != '{SampleStatus.ERROR.value}' AND run IS NOT ? "
                # a vote (its response is the ballots) is no model's answer: kept out where it held a key
                f"AND extracted_by != 'vote' AND {prompt} != '' ORDER BY rowid"
            )
            with naming_the_file(self.path):
                for run, sample, *row in self._db.execute(query, (dumps(list(keys)), excluding)):
                    answer = sample_from_row(tuple(row), self.path, run, sample)
                    assert answer.request_key is not None
                    found[answer.request_key] = (run, answer)
        return found

    def all_samples(self, run: str) -> list[SampleRecord]:
        """Every sample of the run, the repeats' too, by question and sample."""
        return list(self.iter_all_samples(run))

    def iter_all_samples(self, run: str) -> Iterator[SampleRecord]:
        """all_samples one at a time: each question's first sample and its others, merged in order."""
        firsts = ((s.position, s.sample, s) for s in self.iter_samples(run))
        others = ((s.position, s.sample, s) for s in self.iter_repeat_samples(run))
        for _, _, sample in heapq.merge(firsts, others, key=lambda item: (item[0], item[1])):
            yield sample

    # -- the connection -----------------------------------------------------------------------------------
    def _write(self, sql: str, params: tuple[Any, ...], *, answer: bool = False) -> None:
        if self._read_only_reason is not None:
            raise StoreError(f"{self.path} is open read-only ({self._read_only_reason}): cannot write to it")
        self._writes.write(sql, params, answer=answer)

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a read; a damaged or unreadable file is a StoreError naming it."""
        with naming_the_file(self.path):
            return self._db.execute(sql, params).fetchall()


def _on_read_only_file_system(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # statvfs is POSIX only
        return False


def _kept_quietly(path: Path, keep: Callable[[], bool]) -> bool:
    """`keep()`, False where SQLite refused it (a lock held elsewhere, a full disk): what it would have
    kept is counted again by the next reader, so the reading command goes on."""
    try:
        return keep()
    except sqlite3.Error as exc:
        _log.debug("%s: kept no summary (%s)", path, exc)
        return False
