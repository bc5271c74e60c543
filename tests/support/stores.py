"""Stores and store records for tests: a run spec, sample records, small stores built directly, and the
file-level probes (digest, ids stored, a damaged page) the store-safety tests use."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from kaoshi.store import GradeRecord, RunSpec, SampleRecord, Store

SPEC = RunSpec(
    benchmark="sample",
    data=None,
    split=None,
    fingerprint="f" * 64,
    n_questions=2,
    prompt="default",
    prompt_version=1,
    shots=0,
    model="random",
    method="generate",
    seed=0,
    limit=None,
    max_new_tokens=256,
    kaoshi_version="0.1.0",
)


def sample(question_id: str, status: str = "ok", **kw: object) -> SampleRecord:
    base: dict[str, object] = dict(
        question_id=question_id,
        position=0,
        qtype="multi",
        gold=frozenset("AB"),
        points=2.0,
        subject=None,
        domain="d",
        category=None,
        question={"id": question_id},
        prompt="p",
        status=status,
        response="答案：AB",
        answer=frozenset("AB"),
        correct=True,
        score=2.0,
    )
    base.update(kw)
    return SampleRecord(**base)  # type: ignore[arg-type]


# A hand-computed report case: errors never count as wrong, unparsed does, open is ungraded.
REPORT_SAMPLES = [
    # domain d1: 2 correct of 3 graded (one unparsed), plus one error
    sample(
        "a", domain="d1", qtype="single", gold=frozenset("A"), answer=frozenset("A"), points=1.0, score=1.0
    ),
    sample(
        "b", domain="d1", qtype="single", gold=frozenset("B"), answer=frozenset("B"), points=1.0, score=1.0
    ),
    sample(
        "c", domain="d1", qtype="multi", points=2.0, status="unparsed", answer=None, correct=False, score=0.0
    ),
    sample(
        "d",
        domain="d1",
        qtype="multi",
        points=2.0,
        status="error",
        answer=None,
        correct=None,
        score=None,
        error="timeout",
    ),
    # domain d2: 1 correct of 2 graded, one open question ungraded
    sample("e", domain="d2", qtype="judge", gold=True, answer=False, points=1.0, correct=False, score=0.0),
    sample("f", domain="d2", qtype="judge", gold=False, answer=False, points=1.0, correct=True, score=1.0),
    sample("g", domain="d2", qtype="open", points=5.0, answer="文本", correct=None, score=None),
    sample(
        "h",
        domain=None,
        qtype="single",
        gold=frozenset("C"),
        answer=None,
        status="ambiguous",
        points=1.0,
        correct=False,
        score=0.0,
    ),
]


def stored_run(
    path: Path, samples: Sequence[SampleRecord], grades: Sequence[GradeRecord] = (), run: str = "r"
) -> Path:
    """A store holding one finished run of `samples` (at their own places in the list) and `grades`."""
    with Store(path) as opened:
        opened.open_run(run, SPEC)
        for place, one in enumerate(samples):
            opened.add_sample(run, replace(one, position=place))
        for grade in grades:
            opened.add_grade(run, grade)
        opened.finish_run(run)
    return path


def new_store(path: Path, n_samples: int = 0) -> Path:
    with Store(path) as store:
        store.open_run("r", SPEC)
        for i in range(n_samples):
            store.add_sample("r", sample(f"q{i}"))
    return path


def digest(path: Path) -> str:
    """The store's bytes, its -wal's included: a write lands there until a checkpoint copies it in."""
    wal = Path(f"{path}-wal")
    return hashlib.sha256(path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")).hexdigest()


def stored_ids(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT question_id FROM samples")}


def damage_samples_table(path: Path) -> None:
    """Overwrite the head of the samples table's root page, as a bad disk or a torn copy might."""
    with sqlite3.connect(path) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name='samples'").fetchone()[0]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with path.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * 16)


def sample_columns(path: Path) -> set[str]:
    """The columns of a store file's samples table."""
    with sqlite3.connect(path) as db:
        return {row[1] for row in db.execute("PRAGMA table_info(samples)")}


def store_from_before(path: Path, column: str) -> Path:
    """A store as kaoshi wrote it before samples had `column`: one run ("old") of two samples."""
    import kaoshi  # the API: this module is imported by tests of the store alone too

    kaoshi.evaluate("sample", model="constant:A", limit_total=2, run_name="old", store=path)
    with sqlite3.connect(path) as db:
        drop_sample_column(db, column)
    assert column not in sample_columns(path)
    return path


def drop_sample_column(db: sqlite3.Connection, column: str) -> None:
    """Drop a column of `samples` as a store from before it lacks it, with the index of what summaries
    read (samples_scores, newer than every such column), which holds it."""
    db.execute("DROP INDEX IF EXISTS samples_scores")
    db.execute(f"ALTER TABLE samples DROP COLUMN {column}")
