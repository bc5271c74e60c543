"""Hand-made runs with every outcome for the tests of summaries, boards and comparisons (every status, open
answers, groups, served models, cut-off loops, k samples a question; errors, an id holding another question
and judges' grades across runs), and the golden runs written again by this kaoshi."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.api import kept as kept_module
from kaoshi.data.model import QuestionType
from kaoshi.store import Store
from kaoshi.store.records import GradeRecord, GradeStatus, SampleStatus
from tests.support.stores import SPEC, digest, sample

GOLDEN_FILE = Path(__file__).resolve().parents[1] / "golden" / "store.sqlite"


def rewrite(path: Path, rewritten: Path) -> None:
    """Every run, sample and grade of the store at `path` written again by this kaoshi."""
    with Store(path, read_only=True) as source, Store(rewritten) as dest:
        for record in source.runs():
            dest.open_run(record.name, record.spec)
            for stored in source.all_samples(record.name):
                dest.add_sample(record.name, stored)
            for grader in source.graders(record.name):
                for grade in source.grades(record.name, grader).values():
                    dest.add_grade(record.name, grade)
            dest.finish_run(record.name)


def three_and_golden(folder: Path) -> tuple[Path, Path]:
    """Two stores in `folder`: three_runs with errors, and the golden runs written again by this kaoshi
    (every benchmark's)."""
    three = folder / "three.sqlite"
    three_runs(three, errors=("q/8", "q/13"))
    golden = folder / "golden.sqlite"
    shutil.copyfile(GOLDEN_FILE, golden)
    rewritten = folder / "rewritten.sqlite"
    rewrite(golden, rewritten)
    return three, rewritten


def settled_three_runs(path: Path) -> str:
    """three_runs (an error at q/8) with every row in the store's file, no -wal beside it: the file's
    digest, for a test that a reader leaves it as it was."""
    three_runs(path, errors=("q/8",))
    with Store(path):
        pass  # every row in the file
    return digest(path)


def three_runs(path: Path, errors: tuple[str, ...]) -> None:
    """The hand-made run "mixed" and two more of its answers: "other" (every third outcome flipped, the
    questions `errors` failed, another judge's grade) and "third" (every fourth flipped, an id holding
    another question)."""
    mixed_store(path, repeats=1)
    with Store(path) as store:
        samples = store.samples("mixed")
        for name, flip in (("other", 3), ("third", 4)):
            store.open_run(name, SPEC)
            for one in samples:
                changed = one
                if one.correct is not None and int(one.question_id.split("/")[1]) % flip == 0:
                    changed = replace(one, correct=not one.correct)
                if name == "third" and one.question_id == "q/2":
                    changed = replace(changed, question={**one.question, "stem": "另一道题"})
                if name == "other" and one.question_id in errors:
                    changed = replace(changed, status=SampleStatus.ERROR, correct=None, error="boom")
                store.add_sample(name, changed)
            store.finish_run(name)
        store.add_grade("other", GradeRecord("q/5", "judge-b", GradeStatus.OK, 3.0, 0.3, ()))


def mixed_store(path: Path, repeats: int = 3) -> None:
    """Runs with every status, open answers (some graded), groups, served models, cut-off loops and k
    samples a question."""
    statuses = list(SampleStatus)
    loop = "重复一遍。" * 400  # longer than what the loop check reads
    with Store(path) as store:
        store.open_run("mixed", replace(SPEC, repeats=repeats))
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
            for k in range(repeats):
                flipped = base if k == 0 or base.correct is None else replace(base, correct=not base.correct)
                store.add_sample("mixed", replace(flipped, sample=k))
            if kind == 5 and i % 12 == 5:
                grade = GradeRecord(f"q/{i}", "judge-a", GradeStatus.OK, 7.0, 0.7 * base.points, ())
                store.add_grade("mixed", grade)
        store.finish_run("mixed")


# -- changes to a store's runs, each a case of the kept summaries' tests ------------------------------------


def add_new_question(store: Store) -> None:
    one = store.samples("other")[0]
    store.add_sample("other", replace(one, question_id="q/new", position=99, correct=False, score=0.0))


def sql(statement: str) -> Callable[[Store], None]:
    def change(store: Store) -> None:
        store.flush()
        with sqlite3.connect(store.path) as db:
            db.execute(statement)

    return change


def judge_with_a_new_grader(store: Store) -> None:
    store.add_grade("mixed", GradeRecord("q/5", "judge-c", GradeStatus.OK, 1.0, 0.1, ()))


def replace_a_grade(store: Store) -> None:
    store.add_grade("mixed", GradeRecord("q/5", "judge-a", GradeStatus.OK, 2.0, 0.2, ()))


@contextmanager
def written_while_counted(path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within it, another process answers a question of the store at `path` each time a comparison has
    been counted and before it is kept (kaoshi.api.kept.counted_comparison)."""
    counted_comparison = kept_module.counted_comparison

    def counted_while_written(*args: object, **kwargs: object) -> object:
        found = counted_comparison(*args, **kwargs)  # type: ignore[arg-type]
        with Store(path) as store:  # another process answers a question meanwhile
            add_new_question(store)
        return found

    with monkeypatch.context() as patched:
        patched.setattr(kept_module, "counted_comparison", counted_while_written)
        yield


def write_a_run_again(store: Store) -> None:
    """Removed, then written again under its name with other answers: the same board or comparison of
    names."""
    samples = store.samples("third")
    store.remove_runs(["third"])
    store.open_run("third", SPEC)
    for one in samples:
        store.add_sample("third", replace(one, correct=None if one.correct is None else not one.correct))
    store.finish_run("third")


def replace_an_answer(store: Store) -> None:
    one = next(s for s in store.samples("third") if s.correct)
    store.add_sample("third", replace(one, correct=False, score=0.0))


def replace_the_last_row_written(store: Store) -> None:
    """An answer replaced again while it is the table's last row: SQLite gives the new row a larger rowid
    still, so the run's signature changes though its count does not."""
    one = next(s for s in store.samples("third") if s.correct)
    store.add_sample("third", replace(one, correct=False, score=0.0))
    store.add_sample("third", replace(one, response="again"))
    store.add_sample("third", replace(one, correct=False, score=0.0, response="and again"))


def remove_a_run(store: Store) -> None:
    store.remove_runs(["third"])


def rename_a_run(store: Store) -> None:
    store.rename_run("other", "another")


def rename_a_run_away_and_back(store: Store) -> None:
    """Renamed, changed in place under its other name, and renamed back: the same board of names and the
    same count and largest rowid, so what was kept of it is looked up, and only the rename's triggers
    tell."""
    store.rename_run("third", "aside")
    sql("UPDATE samples SET correct = 1 - correct WHERE run = 'aside' AND correct IS NOT NULL")(store)
    store.rename_run("aside", "third")


def remove_a_run_and_restore_its_rows(store: Store) -> None:
    """Removed, then its run and rows put back in their places with their answers flipped: the same board
    of names and, per table, the same count and largest rowid; only the triggers tell."""
    store.flush()
    with closing(sqlite3.connect(store.path)) as db:
        run = db.execute("SELECT * FROM runs WHERE name = 'third'").fetchone()
        cursor = db.execute("SELECT rowid, * FROM samples WHERE run = 'third'")
        names = [column[0] for column in cursor.description]
        correct = names.index("correct")
        rows = [(*row[:correct], None if row[correct] is None else 1 - row[correct], *row[correct + 1 :])
                for row in cursor]  # fmt: skip
    store.remove_runs(["third"])
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute(f"INSERT INTO runs VALUES ({', '.join('?' for _ in run)})", run)
        values = ", ".join("?" for _ in names)
        db.executemany(f"INSERT INTO samples ({', '.join(names)}) VALUES ({values})", rows)


def add_a_run(store: Store) -> None:
    """Another run on the benchmark, as a rescore or a merge writes one: its answers flipped."""
    store.open_run("other-again", SPEC)
    for one in store.samples("other"):
        flipped = None if one.correct is None else not one.correct
        store.add_sample("other-again", replace(one, correct=flipped))
    store.finish_run("other-again")


# Changes made to rows in place, or by a judge: cases of every kept-summary test (boards, a run's report,
# comparisons).
CHANGED_IN_PLACE: dict[str, Callable[[Store], None]] = {
    "a sample updated in place": sql(
        "UPDATE samples SET correct = 1 - correct WHERE run = 'mixed' AND correct IS NOT NULL "
        "AND status != 'error' AND question_id IN ('q/1', 'q/2', 'q/4')"
    ),
    "a sample deleted": sql("DELETE FROM samples WHERE run = 'other' AND question_id = 'q/1'"),
    "an error answered in place": sql(
        "UPDATE samples SET status = 'ok', correct = 1, error = NULL WHERE run = 'other' AND status = 'error'"
    ),
    "judged by a new grader": judge_with_a_new_grader,
    "a grade replaced": replace_a_grade,
    "grades updated in place": sql("UPDATE grades SET points = points / 2 WHERE run = 'mixed'"),
}
# Every kind of change to a run: after each, what was kept of it is counted again (boards, one run's report).
RUN_CHANGES: dict[str, Callable[[Store], None]] = {
    "new question answered": add_new_question,
    "an answer replaced": replace_an_answer,
    "the table's last row replaced": replace_the_last_row_written,
    **CHANGED_IN_PLACE,
    "a run removed": remove_a_run,
    "a run renamed": rename_a_run,
    "a run renamed away, changed in place and renamed back": rename_a_run_away_and_back,
    "a run removed and its rows put back otherwise": remove_a_run_and_restore_its_rows,
    "a run written again under its name": write_a_run_again,
    "a run added (a rescore, a merge)": add_a_run,
}


@contextmanager
def nothing_kept(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within it, the store seems to keep nothing: what is read is counted from the rows."""
    with monkeypatch.context() as patched:
        patched.setattr(Store, "kept_summaries", lambda *_: {})
        yield


@contextmanager
def counting_refused(
    monkeypatch: pytest.MonkeyPatch, what: str, *counts: tuple[object, str]
) -> Iterator[None]:
    """Within it, each of `counts` (an object and the name of its function that counts) fails the test:
    `what` must come from what the store keeps."""

    def counted(*_: object, **__: object) -> None:
        raise AssertionError(f"{what} was counted again, not read from what the store keeps")

    with monkeypatch.context() as patched:
        for owner, name in counts:
            patched.setattr(owner, name, counted)
        yield
