"""Summaries kept in the store (issue 42; kaoshi.store.summaries, kaoshi.api.kept): a board read from what
the store keeps is the board counted again, byte for byte, and every kind of change to a run (new answers,
a replaced answer, rows changed or deleted in place, a judge's grades, a run removed, renamed or written
again) makes the next board count it again, never read it stale. Each change below changes the board, so
that a kept summary taken for the changed rows would fail its test."""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager, closing
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.api import kept as kept_module
from kaoshi.api.boards import leaderboard
from kaoshi.report.leaderboard import leaderboard_table
from kaoshi.report.tables import render_tables
from kaoshi.store import Store, summaries
from kaoshi.store.columns import KIND_COLUMNS, ScoreRow
from kaoshi.store.records import GradeRecord, GradeStatus, SampleStatus
from kaoshi.store.schema import SUMMARY_TRIGGERS
from kaoshi.store.summaries import run_signature
from tests.support.mixed_runs import (
    RUN_CHANGES,
    counting_refused,
    mixed_store,
    nothing_kept,
    replace_an_answer,
    settled_three_runs,
    three_and_golden,
    three_runs,
    written_while_counted,
)
from tests.support.stores import digest


def shown(path: Path, *, keep: bool = True) -> str:
    """Every board of the store as `kaoshi leaderboard` prints it (markdown) and as JSON."""
    boards = leaderboard(store=path, keep=keep)
    tables = [leaderboard_table(board) for board in boards]
    document = [board.to_json(table) for board, table in zip(boards, tables, strict=True)]
    return render_tables(tables, "md") + json.dumps(document, ensure_ascii=False, indent=1, default=str)


def counted_again(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The boards counted from the rows, as if nothing were kept (and nothing kept by this read)."""
    with nothing_kept(monkeypatch):
        return shown(path, keep=False)


def nothing_counted(monkeypatch: pytest.MonkeyPatch) -> AbstractContextManager[None]:
    """No board counted by pairing its runs again (each must come from what is kept)."""
    return counting_refused(monkeypatch, "the board", (kept_module, "counted_comparison"))


def kept_rows(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT run, kind FROM run_summaries ORDER BY run").fetchall()


def test_a_kept_board_is_the_board_counted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three runs with errors, an id holding another question and a judge's grades, and the golden runs
    written again by this kaoshi: the first board counts and keeps, the next reads what was kept (no
    pairing, no count), and both are the board counted from the rows."""
    three, rewritten = three_and_golden(tmp_path)
    for path in (three, rewritten):
        expected = counted_again(path, monkeypatch)
        assert kept_rows(path) == []
        assert shown(path) == expected  # counted, then kept
        with Store(path, read_only=True) as store:
            assert {run for run, _ in kept_rows(path)} == {record.name for record in store.runs()}
        with nothing_counted(monkeypatch):
            assert shown(path) == expected
            assert shown(path, keep=False) == expected
    assert '"conflicting_ids": [\n   "q/2"\n  ]' in shown(three)


@pytest.mark.parametrize("change", sorted(RUN_CHANGES))
def test_every_change_to_a_run_is_counted_again(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    before = shown(path)  # counted and kept
    assert kept_rows(path)
    with Store(path) as store:
        RUN_CHANGES[change](store)
    expected = counted_again(path, monkeypatch)
    assert expected != before, "the change must show on the board, or a stale board would pass"
    assert shown(path) == expected  # what was kept is not taken for the changed rows
    with nothing_counted(monkeypatch):
        assert shown(path) == expected  # and what is kept now is the new board


def test_a_judged_run_is_counted_again_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose grades alone changed is counted again on the kept common questions, without pairing
    every run again: the board counted from the rows all the same."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    shown(path)
    for grade in (
        GradeRecord("q/11", "judge-c", GradeStatus.OK, 9.0, 0.9, ()),  # a new grader: chosen now
        GradeRecord("q/5", "judge-c", GradeStatus.OK, 1.0, 0.1, ()),
    ):
        with Store(path) as store:
            store.add_grade("mixed", grade)
        expected = counted_again(path, monkeypatch)
        with nothing_counted(monkeypatch):
            assert shown(path) == expected


def test_a_run_that_changes_while_it_is_counted_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    with written_while_counted(path, monkeypatch):
        shown(path)
    assert kept_rows(path) == []
    assert shown(path) == counted_again(path, monkeypatch)


def test_the_viewer_reads_what_is_kept_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    before = settled_three_runs(path)
    expected = shown(path, keep=False)
    assert kept_rows(path) == [] and digest(path) == before
    shown(path)  # `kaoshi leaderboard` keeps it
    with nothing_counted(monkeypatch):
        assert shown(path, keep=False) == expected


def test_a_store_opened_for_reading_keeps_through_its_own_write(tmp_path: Path) -> None:
    """`kaoshi leaderboard` opens the store for reading (sqlite's mode=ro) and keeps what it counted in
    one short write of its own; a store held open for writing keeps through its own connection."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    with Store(path, read_only=True) as store:
        leaderboard(store=store)
    assert len(kept_rows(path)) == 3
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM run_summaries")
    with Store(path) as store:
        leaderboard(store=store)
        assert len(kept_rows(path)) == 3


def test_a_store_without_the_triggers_keeps_nothing_and_trusts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store from before the kept summaries (no table, no trigger), or one whose triggers were dropped:
    read the same, nothing kept, and what was kept before is not trusted."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    shown(path)
    with sqlite3.connect(path) as db:
        for name in SUMMARY_TRIGGERS:
            db.execute(f"DROP TRIGGER {name}")
        db.execute("UPDATE samples SET correct = 1 - correct WHERE run = 'mixed' AND correct IS NOT NULL")
    expected = counted_again(path, monkeypatch)
    assert shown(path) == expected
    old = tmp_path / "old.sqlite"
    three_runs(old, errors=("q/8",))
    with sqlite3.connect(old) as db:
        db.execute("DROP TABLE run_summaries")
        db.execute("DROP TABLE run_versions")
    before = digest(old)
    assert shown(old) == counted_again(old, monkeypatch)
    assert digest(old) == before


def test_triggers_made_again_forget_what_was_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Triggers dropped (by hand, or by a tool that rebuilt a table), a run changed without them, and the
    store opened for writing, which makes them again: what was kept before cannot tell the change."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    before = shown(path)
    with closing(sqlite3.connect(path)) as db, db:
        for name in SUMMARY_TRIGGERS:
            db.execute(f"DROP TRIGGER {name}")
        db.execute("UPDATE samples SET correct = 1 - correct WHERE run = 'mixed' AND correct IS NOT NULL")
    with Store(path):
        pass  # the triggers made again
    expected = counted_again(path, monkeypatch)
    assert expected != before
    assert shown(path) == expected


def dump_and_restore(path: Path, restored: Path) -> None:
    """`sqlite3 OLD .dump | sqlite3 NEW`: every table, its rows given new rowids in order, the triggers."""
    with closing(sqlite3.connect(path)) as source, closing(sqlite3.connect(restored)) as target:
        target.executescript("\n".join(source.iterdump()))


def test_a_replaced_answer_shows_after_a_dump_and_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer of the last run written replaced (INSERT OR REPLACE): its new row's larger rowid is lost
    when a dump and restore numbers the rows again, so the replacement itself must count as a change."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    before = shown(path)
    with Store(path) as store:
        replace_an_answer(store)
    restored = tmp_path / "restored.sqlite"
    dump_and_restore(path, restored)
    with closing(sqlite3.connect(restored)) as db:
        assert [rows[:2] for rows in run_signature(db, "third")[:3]] == [[60, 180], [0, 0], [0, 0]]
    expected = counted_again(restored, monkeypatch)
    assert expected != before
    assert shown(restored) == expected


def test_a_kept_board_leaves_no_wal(tmp_path: Path) -> None:
    """`kaoshi leaderboard` keeps through a write connection of its own while its reader is still open:
    what it kept is checkpointed into the file, so that `kaoshi store check` finds no -wal to copy with it
    and a store moved to a read-only folder is read as it is."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    leaderboard(store=path)
    assert kept_rows(path)
    assert not wal.exists() or wal.stat().st_size == 0


_FIELDS = ScoreRow._fields
_AT = _FIELDS.index("served_model")
# What a kaoshi that keeps a kind's fields otherwise might have: (object, attribute, its value there).
OTHER_LAYOUTS: dict[str, tuple[object, str, object]] = {
    "a field added to the row": (ScoreRow, "_fields", (*_FIELDS[:_AT], "new_field", *_FIELDS[_AT:])),
    "two fields of the row swapped": (
        ScoreRow, "_fields", (*_FIELDS[: _AT - 1], _FIELDS[_AT], _FIELDS[_AT - 1], *_FIELDS[_AT + 1 :])
    ),
    "a kind counted from other columns": (summaries, "KIND_COLUMNS", (*KIND_COLUMNS[:-1], "model")),
}  # fmt: skip


@pytest.mark.parametrize("layout", sorted(OTHER_LAYOUTS))
def test_a_kaoshi_whose_kinds_differ_reads_nothing_kept(
    layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is kept of a run's kinds is their fields by position: a kaoshi whose ScoreRow (or the columns a
    kind is counted from) differs looks up another kind, never reads numbers misaligned."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    expected = shown(path)  # counted and kept
    target, name, value = OTHER_LAYOUTS[layout]
    with monkeypatch.context() as patched:
        patched.setattr(target, name, value)
        with nothing_counted(monkeypatch), pytest.raises(AssertionError, match="counted again"):
            shown(path)
    with nothing_counted(monkeypatch):
        assert shown(path) == expected  # read as this kaoshi kept it


def test_a_runs_signature_follows_every_change(tmp_path: Path) -> None:
    """Inserts show in the count and the largest rowid (no trigger on INSERT: the write path keeps its
    speed); changes in place, deletions and a replaced answer in the run's version, a rename in both
    names'."""
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=2)
    with sqlite3.connect(path) as db:
        made = db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
        assert made and not [ddl for (ddl,) in made if " INSERT ON " in ddl.upper()]
        seen = [run_signature(db, "mixed")]
        for statement in (
            "UPDATE samples SET score = score WHERE run = 'mixed' AND question_id = 'q/1'",
            "UPDATE repeat_samples SET score = score WHERE run = 'mixed' AND question_id = 'q/1'",
            "UPDATE grades SET points = points WHERE run = 'mixed'",
            "DELETE FROM repeat_samples WHERE run = 'mixed' AND question_id = 'q/2'",
            "DELETE FROM samples WHERE run = 'mixed' AND question_id = 'q/2'",
        ):
            db.execute(statement)
            seen.append(run_signature(db, "mixed"))
        assert len({json.dumps(one) for one in seen}) == len(seen)
        db.execute("UPDATE samples SET run = 'moved' WHERE run = 'mixed' AND question_id = 'q/3'")
        assert run_signature(db, "mixed") != seen[-1] and run_signature(db, "moved")[0][2] == 1
    with Store(path) as store:
        before = store.summary_signatures(["mixed"])["mixed"]
        last = store.samples("mixed")[-1]
        store.add_sample("mixed", replace(last, status=SampleStatus.UNPARSED))
        after = store.summary_signatures(["mixed"])["mixed"]
    assert after[0][0] == before[0][0] and after[0][1] > before[0][1]
    assert after[0][2] == before[0][2] + 1  # the answer replaced counts as deleted (recursive_triggers)


def test_a_run_keeps_its_benchmarks_board_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kaoshi.evaluate` into a store file counts its benchmark's board once its answers are in: the next
    board (here after a second run, of another model) is read from what is kept, with no run paired again,
    and is the board counted from the rows. A run of another benchmark keeps its own board, not this one's."""
    import kaoshi

    path = tmp_path / "runs.sqlite"
    kaoshi.evaluate("sample", "constant:A", store=path, run_name="first")
    kaoshi.evaluate("sample", "random", store=path, run_name="second")
    expected = counted_again(path, monkeypatch)
    assert {run for run, kind in kept_rows(path) if kind.startswith("board ")} == {"first", "second"}
    with nothing_counted(monkeypatch):
        assert shown(path, keep=False) == expected
    # another run of the same benchmark replaces what was kept with the board of the three
    kaoshi.evaluate("sample", "constant:B", store=path, run_name="third")
    expected = counted_again(path, monkeypatch)
    with nothing_counted(monkeypatch):
        assert shown(path, keep=False) == expected
