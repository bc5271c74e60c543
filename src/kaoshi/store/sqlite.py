"""The embedded SQLite store (WAL): every response is committed the moment it arrives."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kaoshi.data.model import gold_from_json, gold_to_json
from kaoshi.store.records import GradeRecord, RunRecord, RunSpec, RunStatus, SampleRecord, SampleStatus

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    name TEXT PRIMARY KEY,
    spec TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    model TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at REAL NOT NULL,
    finished_at REAL
);
-- The process that last opened a run; a run it left `running` after dying reads as interrupted.
-- A table of its own, so that stores from before it open unchanged.
CREATE TABLE IF NOT EXISTS run_owners (
    run TEXT PRIMARY KEY REFERENCES runs(name) ON DELETE CASCADE,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    opened_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS samples (
    run TEXT NOT NULL REFERENCES runs(name) ON DELETE CASCADE,
    question_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    qtype TEXT NOT NULL,
    gold TEXT,
    points REAL NOT NULL,
    subject TEXT,
    domain TEXT,
    category TEXT,
    question TEXT NOT NULL,
    prompt TEXT NOT NULL,
    status TEXT NOT NULL,
    shots INTEGER NOT NULL DEFAULT 0,
    extracted_by TEXT NOT NULL DEFAULT 'rules',
    extractor_response TEXT,
    response TEXT,
    logprobs TEXT,
    answer TEXT,
    correct INTEGER,
    score REAL,
    latency_s REAL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    error TEXT,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, question_id)
);
CREATE TABLE IF NOT EXISTS grades (
    run TEXT NOT NULL REFERENCES runs(name) ON DELETE CASCADE,
    question_id TEXT NOT NULL,
    grader TEXT NOT NULL,
    status TEXT NOT NULL,
    score REAL,
    points REAL,
    rounds TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (run, question_id, grader)
);
"""
_SAMPLE_COLUMNS = (
    "question_id",
    "position",
    "qtype",
    "gold",
    "points",
    "subject",
    "domain",
    "category",
    "question",
    "prompt",
    "status",
    "shots",
    "extracted_by",
    "extractor_response",
    "response",
    "logprobs",
    "answer",
    "correct",
    "score",
    "latency_s",
    "tokens_in",
    "tokens_out",
    "error",
)


class StoreError(Exception):
    """The store cannot do what was asked (unknown run, spec mismatch, not a kaoshi store)."""


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a killed process loses nothing committed; only a power cut may.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_SCHEMA)
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a usable kaoshi store ({exc})") from exc

    def _check_schema(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif int(row[0]) > SCHEMA_VERSION:
            raise StoreError(f"{self.path}: written by a newer kaoshi (schema {row[0]}); upgrade kaoshi")

    def close(self) -> None:
        self._db.close()

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
            self._db.execute(
                "UPDATE runs SET status=?, finished_at=NULL WHERE name=?", (RunStatus.RUNNING.value, name)
            )
            self._claim(name)
            return self.get_run(name)
        self._db.execute(
            "INSERT INTO runs (name, spec, benchmark, model, fingerprint, status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                name,
                _dumps(spec.to_json()),
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
        self._db.execute(
            "INSERT OR REPLACE INTO run_owners (run, pid, host, opened_at) VALUES (?, ?, ?, ?)",
            (name, os.getpid(), socket.gethostname(), time.time()),
        )

    def interrupt_run(self, name: str) -> None:
        """Mark a run stopped before its end (Ctrl-C); running it again resumes it."""
        self._db.execute(
            "UPDATE runs SET status=? WHERE name=? AND status=?",
            (RunStatus.INTERRUPTED.value, name, RunStatus.RUNNING.value),
        )

    def finish_run(self, name: str) -> None:
        self._db.execute(
            "UPDATE runs SET status=?, finished_at=? WHERE name=?",
            (RunStatus.FINISHED.value, time.time(), name),
        )

    def find_run(self, name: str) -> RunRecord | None:
        row = self._db.execute(_RUN_QUERY + " WHERE name=?", (name,)).fetchone()
        return _run_from_row(row) if row else None

    def get_run(self, name: str) -> RunRecord:
        found = self.find_run(name)
        if found is None:
            known = ", ".join(r.name for r in self.runs()) or "none"
            raise StoreError(f"no run named {name!r} in {self.path} (runs: {known})")
        return found

    def runs(self) -> list[RunRecord]:
        rows = self._db.execute(_RUN_QUERY + " ORDER BY created_at").fetchall()
        return [_run_from_row(row) for row in rows]

    # -- samples ------------------------------------------------------------------------------------------
    def finished_ids(self, run: str) -> set[str]:
        """Questions whose response is stored; errored samples are not finished and are tried again."""
        rows = self._db.execute(
            "SELECT question_id FROM samples WHERE run=? AND status != ?", (run, SampleStatus.ERROR.value)
        )
        return {row[0] for row in rows}

    def add_sample(self, run: str, sample: SampleRecord) -> None:
        """Write one sample and commit it (autocommit); a later write for the same question replaces it."""
        values = _sample_values(sample)
        placeholders = ", ".join("?" for _ in range(len(values) + 2))
        self._db.execute(
            f"INSERT OR REPLACE INTO samples (run, {', '.join(_SAMPLE_COLUMNS)}, created_at) "
            f"VALUES ({placeholders})",
            (run, *values, time.time()),
        )

    # -- grades of open answers ------------------------------------------------------------------------
    def add_grade(self, run: str, grade: GradeRecord) -> None:
        """Write one grade and commit it; a later grade by the same grader replaces it."""
        self._db.execute(
            "INSERT OR REPLACE INTO grades (run, question_id, grader, status, score, points, rounds, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run,
                grade.question_id,
                grade.grader,
                grade.status,
                grade.score,
                grade.points,
                _dumps(list(grade.rounds)),
                time.time(),
            ),
        )

    def grades(self, run: str, grader: str) -> dict[str, GradeRecord]:
        rows = self._db.execute(
            "SELECT question_id, grader, status, score, points, rounds FROM grades WHERE run=? AND grader=?",
            (run, grader),
        )
        return {
            row[0]: GradeRecord(row[0], row[1], row[2], row[3], row[4], tuple(_loads(row[5]))) for row in rows
        }

    def graders(self, run: str) -> list[str]:
        """The graders that have graded this run, oldest first."""
        rows = self._db.execute(
            "SELECT grader FROM grades WHERE run=? GROUP BY grader ORDER BY MIN(created_at)", (run,)
        )
        return [row[0] for row in rows]

    def samples(self, run: str) -> list[SampleRecord]:
        return list(self.iter_samples(run))

    def iter_samples(self, run: str) -> Iterator[SampleRecord]:
        cursor = self._db.execute(
            f"SELECT {', '.join(_SAMPLE_COLUMNS)} FROM samples WHERE run=? ORDER BY position", (run,)
        )
        for row in cursor:
            yield _sample_from_row(row)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


_RUN_QUERY = (
    "SELECT name, spec, status, created_at, finished_at, "
    "(SELECT COUNT(*) FROM samples WHERE run=runs.name), "
    "(SELECT pid FROM run_owners WHERE run=runs.name), (SELECT host FROM run_owners WHERE run=runs.name) "
    "FROM runs"
)


def _run_from_row(row: tuple[Any, ...]) -> RunRecord:
    name, spec, status, created_at, finished_at, n_samples, pid, host = row
    if status == RunStatus.RUNNING.value and _owner_gone(pid, host):
        status = RunStatus.INTERRUPTED.value  # killed or crashed without a chance to say so
    return RunRecord(name, RunSpec.from_json(json.loads(spec)), status, created_at, finished_at, n_samples)


def _owner_gone(pid: int | None, host: str | None) -> bool:
    """Whether the process that opened a run is known to be dead: only on this host can it be asked, and
    a run from before owners were recorded stays `running`."""
    if pid is None or host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, owned by another user
        return False
    return False


def _sample_values(sample: SampleRecord) -> tuple[Any, ...]:
    return (
        sample.question_id,
        sample.position,
        sample.qtype,
        _dumps(gold_to_json(sample.gold)),
        sample.points,
        sample.subject,
        sample.domain,
        sample.category,
        _dumps(sample.question),
        sample.prompt,
        sample.status,
        sample.shots,
        sample.extracted_by,
        sample.extractor_response,
        sample.response,
        None if sample.logprobs is None else _dumps(sample.logprobs),
        _dumps(gold_to_json(sample.answer)),
        None if sample.correct is None else int(sample.correct),
        sample.score,
        sample.latency_s,
        sample.tokens_in,
        sample.tokens_out,
        sample.error,
    )


def _sample_from_row(row: tuple[Any, ...]) -> SampleRecord:
    values = dict(zip(_SAMPLE_COLUMNS, row, strict=True))
    values["gold"] = gold_from_json(_loads(values["gold"]))
    values["answer"] = gold_from_json(_loads(values["answer"]))
    values["question"] = _loads(values["question"])
    values["logprobs"] = _loads(values["logprobs"])
    values["correct"] = None if values["correct"] is None else bool(values["correct"])
    return SampleRecord(**values)
