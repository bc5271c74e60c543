"""Summaries from score rows (issue 42): a run's numbers read as one small row a sample (no prompt, no
question JSON decoded, no whole output) are the numbers of its whole samples, on the golden store and on
hand-made rows with every outcome, open answers graded, groups, k samples a question, cut-off loops and
rows written before the fingerprint column."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.analysis.outputs import TAIL_CHARS
from kaoshi.api.summary import load_run, load_scores
from kaoshi.data.model import QuestionType
from kaoshi.store import Store, StoreError
from kaoshi.store.columns import score_row
from kaoshi.store.pairing import question_fingerprint
from kaoshi.store.records import GradeRecord, GradeStatus, SampleStatus
from tests.support.stores import SPEC, sample

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "store.sqlite"


def both_ways(path: Path, run: str, grader: str | None = None) -> tuple[dict[str, object], dict[str, object]]:
    """(the summary from score rows, the summary from whole samples) as JSON."""
    rows = load_scores(run, store=path, grader=grader).summarize().to_json()
    whole = load_run(run, store=path, grader=grader).summarize().to_json()
    return rows, whole


def test_the_golden_runs_summarise_the_same_from_score_rows(tmp_path: Path) -> None:
    copy = tmp_path / "golden.sqlite"
    shutil.copyfile(GOLDEN, copy)
    seen_graders = 0
    with Store(copy, read_only=True) as store:
        runs = [(record.name, store.graders(record.name)) for record in store.runs()]
    for run, graders in runs:
        for grader in (None, *graders):
            rows, whole = both_ways(copy, run, grader)
            assert rows == whole, (run, grader)
            seen_graders += grader is not None
    assert len(runs) >= 3 and seen_graders >= 1


def mixed_store(path: Path) -> None:
    """Runs with every status, open answers (some graded), groups, served models, cut-off loops and k
    samples a question."""
    statuses = list(SampleStatus)
    loop = "重复一遍。" * 400  # longer than what the loop check reads
    with Store(path) as store:
        store.open_run("mixed", replace(SPEC, repeats=3))
        for i in range(60):
            kind = i % 6
            status = statuses[i % len(statuses)]
            question = {"stem": f"第{i}题 group 不是键", "options": [["A", "甲"], ["B", "乙"]]}
            if i % 4 == 0:
                question["group"] = "理科" if i % 8 else "文科"
            base = sample(
                f"q/{i}",
                position=i,
                question=question,
                subject=f"科目{i % 5}",
                domain=f"领域{i % 3}" if i % 9 else None,
                category="STEM" if i % 2 else "Humanities",
                served_model="other-model" if i % 11 == 0 else None,
            )
            if kind == 5:  # an open answer, graded below for some
                base = replace(
                    base,
                    qtype=QuestionType.OPEN.value,
                    gold="参考答案",
                    answer=None,
                    correct=None,
                    score=None,
                )
            else:
                right = (i * 7) % 3 != 0
                base = replace(base, answer=frozenset("A" if right else "B"), correct=right)
            if status is SampleStatus.ERROR:
                base = replace(base, correct=None, answer=None, score=None, error="boom")
            truncated = i % 10 == 3
            base = replace(
                base,
                status=status,
                truncated=truncated,
                response=loop if truncated else "答案：A",
                tokens_out=100 + i,
                tokens_in=50,
                latency_s=0.1 * i,
                points=1.0 + (i % 3) * 0.5,
                score=None if base.correct is None else (1.0 + (i % 3) * 0.5 if base.correct else 0.0),
            )
            for k in range(3):
                flipped = base if k == 0 or base.correct is None else replace(base, correct=not base.correct)
                store.add_sample("mixed", replace(flipped, sample=k))
            if kind == 5 and i % 12 == 5:
                grade = GradeRecord(f"q/{i}", "judge-a", GradeStatus.OK, 7.0, 0.7 * base.points, ())
                store.add_grade("mixed", grade)
        store.finish_run("mixed")


def test_hand_made_rows_summarise_the_same_from_score_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    for grader in (None, "judge-a"):
        rows, whole = both_ways(path, "mixed", grader)
        assert rows == whole, grader
    rows, _ = both_ways(path, "mixed", "judge-a")
    assert rows["graded_by"] == "judge-a" and rows["k"] == 3
    assert rows["outputs"]["loops"] > 0  # type: ignore[index]
    assert set(rows["groups"]["group"]) == {"理科", "文科", "(none)"}  # type: ignore[index]


def test_score_rows_are_the_rows_of_the_whole_samples(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    with Store(path, read_only=True) as store:
        read = store.score_rows("mixed", text_end=TAIL_CHARS)
        whole = [score_row(s, TAIL_CHARS) for s in store.samples("mixed")]
        repeats = store.score_rows("mixed", repeats=True, text_end=TAIL_CHARS)
        whole_repeats = [score_row(s, TAIL_CHARS) for s in store.iter_repeat_samples("mixed")]
    assert read == whole and len(read) == 60
    assert repeats == whole_repeats and {r.sample for r in repeats} == {1, 2}


@pytest.mark.parametrize("how", ["column emptied", "column dropped"])
def test_rows_written_before_the_fingerprint_and_group_columns_read_them_from_the_question(
    tmp_path: Path, how: str
) -> None:
    """A store from before the columns: its rows are fingerprinted from their questions and their groups
    read from there, so pairing and the numbers are unchanged; opened for writing, the columns are added
    and new rows carry them."""
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    with Store(path, read_only=True) as store:
        expected = [question_fingerprint(s) for s in store.samples("mixed")]
    before = both_ways(path, "mixed")
    with sqlite3.connect(path) as db:
        if how == "column emptied":
            db.execute("UPDATE samples SET fingerprint = NULL, question_group = NULL")
        else:
            db.execute("DROP INDEX IF EXISTS samples_tally")
            db.execute("ALTER TABLE samples DROP COLUMN fingerprint")
            db.execute("ALTER TABLE samples DROP COLUMN question_group")
    with Store(path, read_only=True) as store:
        read = store.score_rows("mixed", text_end=TAIL_CHARS)
    assert [r.fingerprint for r in read] == expected
    assert {r.group for r in read} == {"理科", "文科", None}
    assert both_ways(path, "mixed") == before
    with Store(path) as store:  # opened for writing: the column is back, and a new row is fingerprinted
        store.add_sample("mixed", sample("new/1"))
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT fingerprint FROM samples WHERE question_id = 'new/1'").fetchone()[0]
    assert stored == question_fingerprint(sample("new/1"))


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("status", "'exploded'", "unknown status 'exploded'"),
        ("gold", "'{not json'", "its gold is not readable JSON"),
        ("answer", "'{\"a\": 1}'", "its answer is not an answer kaoshi reads"),
    ],
)
def test_a_value_kaoshi_cannot_read_names_the_store_run_and_question(
    tmp_path: Path, column: str, value: str, said: str
) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE samples SET {column} = {value} WHERE question_id = 'q/7'")
    with pytest.raises(StoreError) as caught:
        load_scores("mixed", store=path)
    message = str(caught.value)
    assert str(path) in message and "run 'mixed'" in message and "question 'q/7'" in message
    assert said in message
