"""A reply the backend cut off at the token budget (finish_reason "length") is marked `truncated` in its
sample, and the report counts the graded answers so cut; stores from before the mark read it as false."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.store import Store
from kaoshi.store.schema import TABLES
from tests.support.files import write_jsonl
from tests.support.stores import drop_sample_column

EXAM = load_exam_result("sample").exam


def _script(path: Path, cut: set[str]) -> Path:
    """Every objective question answered A; the ones in `cut` as replies stopped at the budget."""
    rows = []
    for q in EXAM.questions:
        text = "答案：A" if q.type.value != "judge" else "答案：正确"
        if q.type.value == "open":
            text = "参考回答"
        rows.append({"id": q.id, "response": text, **({"truncated": True} if q.id in cut else {})})
    return write_jsonl(path, rows)


def test_a_cut_off_reply_is_marked_and_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    objective = [q.id for q in EXAM.questions if q.type.value in ("single", "multi")]
    cut = set(objective[:3])
    script = _script(tmp_path / "script.jsonl", cut)
    store = tmp_path / "s.sqlite"
    result = kaoshi.evaluate("sample", model=f"mock:{script}", run_name="r", store=store)
    assert {s.question_id for s in result.samples if s.truncated} == cut
    assert result.summary.overall.truncated == 3
    assert main(["report", "r", "--format", "json", "--store", str(store)]) == 0
    assert json.loads(capsys.readouterr().out)["truncated"] == 3
    assert main(["report", "r", "--store", str(store)]) == 0
    graded = result.summary.overall.graded
    assert f"cut off by the token budget (3 of {graded} graded answers)" in capsys.readouterr().out
    assert main(["samples", "r", "--format", "jsonl", "--store", str(store)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["id"] for row in rows if row["truncated"]} == cut


def test_no_row_when_nothing_was_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model=f"mock:{_script(tmp_path / 's.jsonl', set())}", run_name="r", store=store)
    assert main(["report", "r", "--store", str(store)]) == 0
    assert "token budget" not in capsys.readouterr().out


def _store_from_before_the_mark(path: Path) -> Path:
    """A store as kaoshi wrote it before samples had a `truncated` column: one run, one sample."""
    kaoshi.evaluate("sample", model="constant:A", limit_total=2, run_name="old", store=path)
    with sqlite3.connect(path) as db:
        drop_sample_column(db, "truncated")
    with sqlite3.connect(path) as db:
        assert "truncated" not in {row[1] for row in db.execute("PRAGMA table_info(samples)")}
    return path


def test_a_store_from_before_the_mark_reads_it_as_false_and_gains_it_on_writing(tmp_path: Path) -> None:
    path = _store_from_before_the_mark(tmp_path / "old.sqlite")
    with Store(path, read_only=True) as store:  # read-only: the file is not changed
        assert [s.truncated for s in store.samples("old")] == [False, False]
    with sqlite3.connect(path) as db:
        assert "truncated" not in {row[1] for row in db.execute("PRAGMA table_info(samples)")}
    # opens it to write
    kaoshi.evaluate("sample", model="constant:A", limit_total=2, run_name="new", store=path)
    with sqlite3.connect(path) as db:
        assert "truncated" in {row[1] for row in db.execute("PRAGMA table_info(samples)")}
    with Store(path, read_only=True) as store:
        assert [s.truncated for s in (*store.samples("old"), *store.samples("new"))] == [False] * 4


def test_the_samples_table_declares_the_column() -> None:
    assert "truncated INTEGER NOT NULL DEFAULT 0" in TABLES["samples"]


def test_a_mock_line_must_say_truncated_with_a_boolean(tmp_path: Path) -> None:
    script = write_jsonl(
        tmp_path / "bad.jsonl", [{"id": EXAM.questions[0].id, "response": "A", "truncated": 1}]
    )
    with pytest.raises(Exception, match="truncated"):
        kaoshi.evaluate("sample", model=f"mock:{script}", limit=1)
