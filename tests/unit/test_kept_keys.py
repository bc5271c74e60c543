"""A run's answer rows kept by its writer as it ends (kaoshi.api.kept.kept_keys, beside its counts): the
comparisons that pair runs (`kaoshi report A B`, the leaderboard, the viewer's compare page) read them instead
of asking SQLite for every row of each run, the same rows, and only while the run's rows are those they were
kept from and for the grader the comparison reads."""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.api import kept as kept_module
from kaoshi.api.boards import leaderboard
from kaoshi.api.counting import open_types
from kaoshi.api.kept import kept_keys, keys_kind
from kaoshi.api.summary import keep_counts
from kaoshi.report.leaderboard import leaderboard_table
from kaoshi.results.grading import chosen_grader
from kaoshi.store import Store
from kaoshi.store.records import GradeRecord, GradeStatus
from kaoshi.store.rows import dumps
from kaoshi.store.summaries import keys_from_json, keys_to_json
from tests.support.compared_outputs import compared, counted_again, everything, pages, reported
from tests.support.mixed_runs import counting_refused, nothing_kept


def test_rows_read_back_are_the_rows_kept() -> None:
    rows = [
        ("q/1", "f" * 64, "ok", 1, 1.0, '"A"', '"A"', "single"),
        ("第2题", "e" * 64, "error", None, None, None, '["A", "C"]', "multi"),
        ("q/3", "d" * 64, "ok", 0, 0.0, "true", "false", "judge"),
        ("q/4", "c" * 64, "unparsed", None, 0.5, "null", "null", "open"),
        ("q/5", "b" * 64, "ok", 1, 1.0, '"A"', '"A"', "single"),
    ]
    value = json.loads(dumps(keys_to_json(rows)))  # as the store holds it
    assert keys_from_json(value, answers=True) == rows
    assert keys_from_json(value, answers=False) == [row[:5] for row in rows]
    assert len(value["values"]) == 4  # q/1 and q/5 hold the same values once
    assert keys_from_json(json.loads(dumps(keys_to_json([]))), answers=True) == []
    odd = json.loads(dumps(keys_to_json([("q", "f", "ok", 1, math.inf, None, None, "open")])))
    assert keys_from_json(odd, answers=True) == [("q", "f", "ok", 1, math.inf, None, None, "open")]
    for column in ("ids", "fingerprints", "codes"):  # rows cut short (a payload edited by hand) are refused
        with pytest.raises(ValueError):
            keys_from_json({**value, column: value[column][:-1]}, answers=True)
    short = [*value["values"][:-1], value["values"][-1][:4]]
    with pytest.raises(ValueError):
        keys_from_json({**value, "values": short}, answers=True)


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    path = tmp_path / "s.sqlite"
    for name, model in (("a", "random"), ("b", "constant:A")):
        kaoshi.evaluate("sample", model=model, run_name=name, store=path)
    return path


def _typed(rows: list[Any] | None) -> list[tuple[tuple[Any, type], ...]] | None:
    """The rows with each value's type beside it (1, 1.0 and True are equal, and must not be taken alike)."""
    return None if rows is None else [tuple((value, type(value)) for value in row) for row in rows]


def test_a_writer_keeps_its_rows_as_sqlite_gives_them(two_runs: Path) -> None:
    with Store(two_runs) as store:
        graded = store.samples("b")[0].question_id
        store.add_grade("b", GradeRecord(graded, "judge-x", GradeStatus.OK, 6.0, 0.5, ()))
        keep_counts(store, "b")  # as `kaoshi judge` ends: b's rows kept with judge-x's points
    with Store(two_runs, read_only=True) as store:
        for record in store.runs():
            grader = chosen_grader(store, record.name, None)
            signatures = store.summary_signatures([record.name])
            for answers, read in ((True, store.answer_keys), (False, store.pair_keys)):
                expected = read(record.name, grader, open_types(), ordered=True)
                assert _typed(kept_keys(store, signatures, record, grader, answers)) == _typed(expected)
                assert kept_keys(store, {}, record, grader, answers) is None  # read under another signature
            other = "judge-x" if grader is None else None
            assert kept_keys(store, signatures, record, other, True) is None  # kept for another grader


def test_comparisons_pair_the_kept_rows_and_show_what_the_rows_show(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with nothing_kept(monkeypatch):
        expected = [
            reported(two_runs, ["a", "b"], keep=False),
            compared(two_runs, ["a", "b"], keep=False),
            pages(two_runs, ["a", "b"]),
            [leaderboard_table(one).rows for one in leaderboard(store=two_runs, keep=False)],
        ]
    refused = ((Store, "answer_keys"), (Store, "pair_keys"), (Store, "score_kinds"))
    with counting_refused(monkeypatch, "a run's rows", *refused):
        shown = [
            reported(two_runs, ["a", "b"], keep=False),
            compared(two_runs, ["a", "b"], keep=False),  # the first run's score rows, the other's kept
        ]
    # the viewer's page reads the rows of the questions it shows (answer_keys), from what is kept too
    shown += [
        pages(two_runs, ["a", "b"]),
        [leaderboard_table(one).rows for one in leaderboard(store=two_runs, keep=False)],
    ]
    assert shown == expected


def test_rows_written_or_graded_since_are_read_from_the_store(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(two_runs) as store:
        # b's first objective answer written again, right where it was wrong (or wrong where right)
        sample = next(one for one in store.samples("b") if one.correct is not None)
        flipped = not sample.correct
        store.add_sample("b", replace(sample, response="答案：B", correct=flipped, score=float(flipped)))
        first = store.samples("a")[0].question_id
        store.add_grade("a", GradeRecord(first, "judge-x", GradeStatus.OK, 1.0, 1.0, ()))
    expected = counted_again(two_runs, ["a", "b"], monkeypatch)
    assert everything(two_runs, ["a", "b"], keep=False) == expected


def test_rows_written_while_they_are_read_are_not_kept(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer written between the run's counts and its rows being read: the counts are kept, the rows,
    read after it, are not (nor will they be taken for the rows counted)."""
    with Store(two_runs) as store:
        store.add_sample("a", replace(store.samples("a")[0], response="答案：C"))  # the kept ones are stale
        read = Store.answer_keys

        def written_first(self: Store, run: str, *args: Any, **kwargs: Any) -> Any:
            sample = self.samples(run)[1]
            self.add_sample(run, replace(sample, response="答案：D"))
            return read(self, run, *args, **kwargs)

        monkeypatch.setattr(Store, "answer_keys", written_first)
        keep_counts(store, "a")
        monkeypatch.undo()
        record = store.get_run("a")
        assert kept_keys(store, store.summary_signatures(["a"]), record, None, True) is None
        assert keys_kind(record) not in store.summary_kinds("a")


def test_a_run_counted_by_a_kaoshi_that_kept_no_rows_keeps_them_and_only_them(two_runs: Path) -> None:
    """A run whose counts are kept but not its rows (an older kaoshi's, or their write refused) has its
    rows kept by the next command that ends writing it; a run keeps one set of rows, one of counts."""
    with Store(two_runs) as store:
        record = store.get_run("a")
        with sqlite3.connect(two_runs) as db:
            db.execute("DELETE FROM run_summaries WHERE run = 'a' AND kind = ?", (keys_kind(record),))
            # what an older kaoshi kept under kinds of its own
            db.execute(
                "INSERT INTO run_summaries SELECT run, 'keys older', signature, marker, payload "
                "FROM run_summaries WHERE run = 'a' AND kind LIKE 'run %'"
            )
        assert keys_kind(record) not in store.summary_kinds("a")
        keep_counts(store, "a")
        signatures = store.summary_signatures(["a"])
        assert kept_keys(store, signatures, record, None, True) == store.answer_keys("a", None, open_types())
        kinds = store.summary_kinds("a")
        assert keys_kind(record) in kinds and "keys older" not in kinds
        own = sorted(label for label in (kind.split()[0] for kind in kinds) if label in ("keys", "run"))
        assert own == ["keys", "run"]


def test_rows_kept_in_another_form_are_not_read(two_runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows kept by a kaoshi that keeps them otherwise (another form, or read by another query) are
    never taken: their kind is another."""
    with Store(two_runs, read_only=True) as store:
        record = store.get_run("a")
        signatures = store.summary_signatures(["a"])
        assert kept_keys(store, signatures, record, None, True) is not None
        monkeypatch.setattr(kept_module, "_KEYS_FORMAT", 2)
        assert kept_keys(store, signatures, record, None, True) is None
        monkeypatch.undo()
        monkeypatch.setattr(kept_module, "answer_keys_layout", lambda types: f"another query {types}")
        assert kept_keys(store, signatures, record, None, True) is None
