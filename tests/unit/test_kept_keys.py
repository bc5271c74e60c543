"""A run's answer rows kept by its writer as it ends (kaoshi.api.kept.kept_keys, beside its counts): the
comparisons that pair runs (`kaoshi report A B`, the leaderboard, the viewer's compare page) read them instead
of asking SQLite for every row of each run, the same rows, and only while the run's rows are those they were
kept from and for the grader the comparison reads."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

import kaoshi
from kaoshi.api.boards import leaderboard
from kaoshi.api.counting import open_types
from kaoshi.api.kept import kept_keys
from kaoshi.report.leaderboard import leaderboard_table
from kaoshi.store import Store
from kaoshi.store.records import GradeRecord, GradeStatus
from kaoshi.store.rows import dumps
from kaoshi.store.summaries import keys_from_json, keys_to_json
from tests.support.mixed_runs import counting_refused
from tests.unit.test_kept_comparisons import compared, counted_again, everything, reported


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


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    path = tmp_path / "s.sqlite"
    for name, model in (("a", "random"), ("b", "constant:A")):
        kaoshi.evaluate("sample", model=model, run_name=name, store=path)
    return path


def test_a_writer_keeps_its_rows_as_sqlite_gives_them(two_runs: Path) -> None:
    with Store(two_runs, read_only=True) as store:
        for record in store.runs():
            signatures = store.summary_signatures([record.name])
            for answers, read in ((True, store.answer_keys), (False, store.pair_keys)):
                expected = read(record.name, None, open_types(), ordered=True)
                assert kept_keys(store, signatures, record, None, answers) == expected
                assert (
                    kept_keys(store, {}, record, None, answers) is None
                )  # rows read under another signature
            assert kept_keys(store, signatures, record, "judge-x", True) is None  # kept for no grader


def test_comparisons_pair_the_kept_rows_and_show_what_the_rows_show(
    two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = counted_again(two_runs, ["a", "b"], monkeypatch)
    board = [leaderboard_table(one).rows for one in leaderboard(store=two_runs, keep=False)]
    refused = ((Store, "answer_keys"), (Store, "pair_keys"), (Store, "score_kinds"))
    with counting_refused(monkeypatch, "a run's rows", *refused):
        shown = reported(two_runs, ["a", "b"], keep=False)
        assert [leaderboard_table(one).rows for one in leaderboard(store=two_runs, keep=False)] == board
        paired = compared(two_runs, ["a", "b"], keep=False)  # the first run's score rows, the other's kept
    assert shown in expected and paired in expected


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
