"""The viewer's reads of the store, in SQL that the store's primary keys make fast: every connection is
read-only (sqlite's mode=ro), one per request, so each page sees what other processes have committed.

A run of 200,000 samples is paged through its primary key (run, question_id); the counts behind the
filters come from one GROUP BY per run, kept while the store is unchanged (kaoshi.view.state). A run's
signature (its samples' and grades' count and largest rowid, read from the keys' indexes alone) tells the
runs page's live counts which runs gained rows (kaoshi.view.live).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.data.model import format_gold, gold_from_json
from kaoshi.results.metrics import UNKNOWN_GROUP
from kaoshi.store.errors import naming_the_file
from kaoshi.store.opening import connect
from kaoshi.store.records import GradeRecord, RunSpec, SampleRecord
from kaoshi.store.rows import GRADE_COLUMNS, SAMPLE_COLUMNS, grade_from_row, loads, sample_from_row
from kaoshi.store.schema import (
    add_reading_stand_ins,
    missing_columns,
    select_list,
    stored_schema_version,
    stored_text,
)
from kaoshi.view.filters import FACETS, PAGE_SIZE, SAMPLES_FROM, Cell, SampleFilter, outcome_sql

# A run's samples and grades as they stand: (samples, largest samples rowid, grades, largest grades
# rowid). A written, replaced or removed row changes it (a replaced row gets a new rowid).
Signature = tuple[int, int, int, int]
RESPONSE_PREVIEW = 120


@contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the kaoshi store at `path`; never creates or writes the file."""
    with naming_the_file(path):
        db = connect(path, read_only=True)
        try:
            stored_schema_version(db, path)
            add_reading_stand_ins(db)  # temporary tables, in memory: the file is not touched
            yield db
        finally:
            db.close()


def truncated_column(db: sqlite3.Connection) -> str:
    """`s.truncated`, or 0 for a store from before the column."""
    return "0" if any(c[0] == "truncated" for c in missing_columns(db, "samples")) else "s.truncated"


def signatures(db: sqlite3.Connection) -> dict[str, Signature]:
    """Every run's signature, from the primary keys' indexes (no sample row is read)."""
    samples = {
        r[0]: (r[1], r[2]) for r in db.execute("SELECT run, COUNT(*), MAX(rowid) FROM samples GROUP BY run")
    }
    grades = {
        r[0]: (r[1], r[2]) for r in db.execute("SELECT run, COUNT(*), MAX(rowid) FROM grades GROUP BY run")
    }
    return {run: (*samples.get(run, (0, 0)), *grades.get(run, (0, 0))) for run in {*samples, *grades}}


def run_signature(db: sqlite3.Connection, run: str) -> Signature:
    samples = db.execute("SELECT COUNT(*), MAX(rowid) FROM samples WHERE run = ?", (run,)).fetchone()
    grades = db.execute("SELECT COUNT(*), MAX(rowid) FROM grades WHERE run = ?", (run,)).fetchone()
    return (samples[0], samples[1] or 0, grades[0], grades[1] or 0)


def graders(db: sqlite3.Connection) -> dict[str, str]:
    """Each judged run's most recent grader (the one `kaoshi report` folds in:
    kaoshi.results.grading.chosen_grader)."""
    rows = db.execute(
        "SELECT run, grader FROM grades GROUP BY run, grader ORDER BY run, MIN(created_at)"
    ).fetchall()
    return {run: grader for run, grader in rows}  # the last of each run's wins


def latest_grader(db: sqlite3.Connection, run: str) -> str | None:
    row = db.execute(
        "SELECT grader FROM grades WHERE run = ? GROUP BY grader ORDER BY MIN(created_at) DESC LIMIT 1",
        (run,),
    ).fetchone()
    return None if row is None else str(row[0])


def sample_cells(db: sqlite3.Connection, run: str, grader: str | None) -> list[Cell]:
    """The run's samples counted by outcome, cut-off flag and grouping values: one pass over the run."""
    groupings = ", ".join(f"s.{column}" for column in FACETS.values())
    query = (
        f"SELECT ({outcome_sql()}), {truncated_column(db)}, {groupings}, COUNT(*) {SAMPLES_FROM} "
        f"GROUP BY 1, 2, {', '.join(str(i) for i in range(3, 3 + len(FACETS)))}"
    )
    cells = []
    for outcome, truncated, *values, count in db.execute(query, (grader, run)):
        named = {key: value or UNKNOWN_GROUP for key, value in zip(FACETS, values, strict=True)}
        cells.append(Cell(outcome, bool(truncated), named, count))
    return cells


@dataclass(frozen=True)
class SampleRow:
    """One line of the samples table."""

    question_id: str
    values: dict[str, str]  # grouping -> value ("" where none)
    gold: str
    answer: str
    outcome: str
    truncated: bool
    response: str  # its first RESPONSE_PREVIEW characters


def _answer_text(stored: str | None) -> str:
    value = gold_from_json(loads(stored))
    return "" if value is None else format_gold(value)


def page_query(
    db: sqlite3.Connection, run: str, grader: str | None, chosen: SampleFilter
) -> tuple[str, tuple[Any, ...]]:
    """The SQL of one page of the run's samples that pass the filter, and its parameters: in question-id
    order, the primary key's (no sort), one row more than a page to tell whether another follows."""
    where, values = chosen.where(truncated_column(db), stored_text(db, "samples", "question", alias="s"))
    columns = ", ".join(f"s.{column}" for column in FACETS.values())
    query = (
        f"SELECT s.question_id, {columns}, s.gold, s.answer, ({outcome_sql()}), {truncated_column(db)}, "
        f"substr(s.response, 1, {RESPONSE_PREVIEW}) {SAMPLES_FROM}{where} "
        "ORDER BY s.question_id LIMIT ? OFFSET ?"
    )
    return query, (grader, run, *values, PAGE_SIZE + 1, chosen.offset)


def sample_rows(
    db: sqlite3.Connection, run: str, grader: str | None, chosen: SampleFilter
) -> tuple[list[SampleRow], bool]:
    """One page of the run's samples that pass the filter, and whether another page follows."""
    found = db.execute(*page_query(db, run, grader, chosen)).fetchall()
    rows = []
    for question_id, *rest in found[:PAGE_SIZE]:
        groups = rest[: len(FACETS)]
        gold, answer, outcome, truncated, response = rest[len(FACETS) :]
        rows.append(
            SampleRow(
                question_id,
                {key: value or "" for key, value in zip(FACETS, groups, strict=True)},
                _answer_text(gold),
                _answer_text(answer),
                outcome,
                bool(truncated),
                response or "",
            )
        )
    return rows, len(found) > PAGE_SIZE


def one_sample(db: sqlite3.Connection, path: Path, run: str, question_id: str) -> SampleRecord | None:
    """The stored sample, through the primary key."""
    columns = select_list(db, "samples", SAMPLE_COLUMNS)
    row = db.execute(
        f"SELECT {columns} FROM samples WHERE run = ? AND question_id = ?", (run, question_id)
    ).fetchone()
    return None if row is None else sample_from_row(row, path, run)


def sample_texts(db: sqlite3.Connection, run: str, question_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """question id -> (its stem, the run's response or else its error) for the given questions only."""
    found: dict[str, tuple[str, str]] = {}
    question = stored_text(db, "samples", "question")
    for start in range(0, len(question_ids), 500):  # within SQLite's limit on parameters
        chunk = list(question_ids[start : start + 500])
        marks = ", ".join("?" for _ in chunk)
        query = (
            f"SELECT question_id, json_extract({question}, '$.stem'), "
            "COALESCE(NULLIF(response, ''), error, '') "
            f"FROM samples WHERE run = ? AND question_id IN ({marks})"
        )
        for qid, stem, text in db.execute(query, (run, *chunk)):
            found[qid] = ("" if stem is None else str(stem), text)
    return found


def repeat_samples(db: sqlite3.Connection, path: Path, run: str, question_id: str) -> list[SampleRecord]:
    """The question's samples after its first (kaoshi run --repeats), by sample index."""
    columns = select_list(db, "repeat_samples", SAMPLE_COLUMNS)
    rows = db.execute(
        f"SELECT sample, {columns} FROM repeat_samples WHERE run = ? AND question_id = ? ORDER BY sample",
        (run, question_id),
    ).fetchall()
    return [sample_from_row(tuple(row), path, run, index) for index, *row in rows]


def sample_grades(db: sqlite3.Connection, path: Path, run: str, question_id: str) -> list[GradeRecord]:
    """Every grader's grade of the sample, oldest grader first."""
    columns = select_list(db, "grades", GRADE_COLUMNS)
    rows = db.execute(
        f"SELECT {columns} FROM grades WHERE run = ? AND question_id = ? ORDER BY created_at",
        (run, question_id),
    ).fetchall()
    return [grade_from_row(row, path, run) for row in rows]


def neighbours(db: sqlite3.Connection, run: str, question_id: str) -> tuple[str | None, str | None]:
    """The ids before and after this one in the run (question-id order)."""
    before = db.execute(
        "SELECT question_id FROM samples WHERE run = ? AND question_id < ? ORDER BY question_id DESC LIMIT 1",
        (run, question_id),
    ).fetchone()
    after = db.execute(
        "SELECT question_id FROM samples WHERE run = ? AND question_id > ? ORDER BY question_id LIMIT 1",
        (run, question_id),
    ).fetchone()
    return (before[0] if before else None, after[0] if after else None)


def run_spec(db: sqlite3.Connection, run: str) -> RunSpec | None:
    """The run's spec (None: no such run), without counting its samples as Store.find_run does."""
    row = db.execute("SELECT spec FROM runs WHERE name = ?", (run,)).fetchone()
    return None if row is None else RunSpec.from_json(json.loads(row[0]))
