"""A run's counts kept in the store (issue 42; kaoshi.api.kept.kept_run): `kaoshi report RUN`,
`kaoshi.summarize` and the viewer's run page read from what the run's writer kept (kaoshi.evaluate and
kaoshi.judge as they end, or a summary asked to keep) are the same, byte for byte, as counted again from
the rows, and every kind of change to the run (new answers, a replaced answer, rows changed or deleted in
place, a judge's grades, a run written again, removed or renamed) makes the next one count again, never
read it stale. A reader keeps nothing: `kaoshi report RUN` leaves the store's file as it was."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

import kaoshi
from kaoshi.api import backup_store
from kaoshi.api.summary import summarize
from kaoshi.report import render_summary
from kaoshi.store import Store, StoreError
from tests.support.mixed_runs import (
    RUN_CHANGES,
    counting_refused,
    judge_with_a_new_grader,
    nothing_kept,
    settled_three_runs,
    sql,
    three_and_golden,
    three_runs,
)
from tests.support.stores import digest

testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")

LOCAL = "http://127.0.0.1:8000"


def reported(path: Path, *, keep: bool = True, grader: str | None = None) -> str:
    """`kaoshi report RUN` of every run in the store, as JSON, as a table and as markdown, with
    `--standard-score` and `--by domain` too (what is kept is the counts: each report is made from them)."""
    with Store(path, read_only=True) as store:
        names = [record.name for record in store.runs()]
    shown = []
    for name in names:
        summary = summarize(name, store=path, keep=keep, grader=grader, outcomes=False)
        shown += [render_summary(summary, fmt) for fmt in ("json", "table", "md")]
        by_domain = summarize(name, store=path, keep=keep, by=["domain"], standard_scores={"单选": 2.0})
        shown.append(render_summary(by_domain, "json"))
        shown.append(repr(sorted(by_domain.outcomes.items())))
    return "\n".join(shown)


def pages(path: Path) -> str:
    """The viewer's run page of every run (the viewer never writes)."""
    from kaoshi.view import create_app
    from kaoshi.view.urls import run_url

    with Store(path, read_only=True) as store:
        names = [record.name for record in store.runs()]
    shown = []
    with testclient.TestClient(create_app(path), base_url=LOCAL) as client:
        for name in names:
            answer = client.get(run_url(name))
            assert answer.status_code == 200, answer.text
            shown.append(answer.text)
    return "".join(shown)


def counted_again(path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every report counted from the rows, as if nothing were kept (and nothing kept by this read)."""
    with nothing_kept(monkeypatch):
        return reported(path, keep=False)


def nothing_counted(monkeypatch: pytest.MonkeyPatch) -> AbstractContextManager[None]:
    """No run counted again: each report's counts must come from what the store keeps."""
    return counting_refused(monkeypatch, "the run", (Store, "score_kinds"), (Store, "output_counts"))


def kept_runs(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {
            run for run, kind in db.execute("SELECT run, kind FROM run_summaries") if kind.startswith("run ")
        }


def test_a_kept_run_is_the_run_counted_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three runs with errors, open answers, judges' grades and cut-off loops, and the golden runs written
    again by this kaoshi (every benchmark's): the first report counts and keeps, the next reads what was
    kept, and both are the report counted from the rows."""
    three, rewritten = three_and_golden(tmp_path)
    for path in (three, rewritten):
        expected = counted_again(path, monkeypatch)
        assert kept_runs(path) == set()
        assert reported(path) == expected  # counted, then kept
        with Store(path, read_only=True) as store:
            single = {record.name for record in store.runs() if record.spec.repeats == 1}
        assert kept_runs(path) == single and single
        with nothing_counted(monkeypatch):
            assert reported(path) == expected
            assert reported(path, keep=False) == expected


@pytest.mark.parametrize("change", sorted(RUN_CHANGES))
def test_every_change_to_a_run_is_counted_again(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    before = reported(path)  # counted and kept
    with Store(path) as store:
        RUN_CHANGES[change](store)
    expected = counted_again(path, monkeypatch)
    assert expected != before, "the change must show in a report, or a stale report would pass"
    assert reported(path) == expected  # what was kept is not taken for the changed rows
    with nothing_counted(monkeypatch):
        assert reported(path) == expected  # and what is kept now is the new count


def test_a_report_with_another_grader_is_counted_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    with Store(path) as store:
        judge_with_a_new_grader(store)  # "mixed" graded by judge-a, then by judge-c
    reported(path)  # kept for each run's most recent judge
    with monkeypatch.context() as patched:
        patched.setattr(Store, "kept_summaries", lambda *_: {})
        expected = summarize("mixed", store=path, keep=False, grader="judge-a")
        assert summarize("mixed", store=path, keep=False) != expected  # judge-c's
    assert summarize("mixed", store=path, grader="judge-a", keep=True) == expected
    with nothing_counted(monkeypatch):
        assert summarize("mixed", store=path, grader="judge-a") == expected


def test_the_viewer_reads_a_kept_run_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    before = settled_three_runs(path)
    expected = pages(path)
    assert kept_runs(path) == set() and digest(path) == before
    reported(path, keep=False)  # `kaoshi report RUN` keeps nothing either
    assert kept_runs(path) == set() and digest(path) == before
    reported(path)  # a writer keeps it
    with nothing_counted(monkeypatch):
        assert pages(path) == expected


def test_a_run_keeps_its_counts_when_it_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kaoshi.evaluate` into a store file keeps what its summary counted: the first `kaoshi report RUN`
    after it counts nothing, and reports what is counted from the rows."""
    path = tmp_path / "runs.sqlite"
    kaoshi.evaluate("sample", "random", store=path, run_name="first")
    assert kept_runs(path) == {"first"}
    expected = counted_again(path, monkeypatch)
    with nothing_counted(monkeypatch):
        assert reported(path, keep=False) == expected


def test_a_judge_keeps_the_counts_with_its_grades(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`kaoshi.judge` ends by counting the run with its grades folded in and keeping that: the next report
    (the new judge's, as the most recent) counts nothing and is the report counted from the rows."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    reported(path)  # kept with judge-a's grades
    kaoshi.judge("mixed", lambda prompt: "评分：2", store=path)
    expected = counted_again(path, monkeypatch)
    assert "judge-a" not in render_summary(summarize("mixed", store=path), "json")
    with nothing_counted(monkeypatch):
        assert reported(path, keep=False) == expected


def test_the_report_command_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    from kaoshi.cli.main import main

    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    with Store(path):
        pass  # every row in the file
    before = digest(path)
    for name in ("mixed", "other"):
        assert main(["report", name, "--store", str(path)]) == 0
    assert kept_runs(path) == set() and digest(path) == before


def test_rescore_merge_and_vote_keep_the_counts_of_the_runs_they_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    for name, model in (("a", "random"), ("b", "constant:A"), ("c", "constant:B")):
        kaoshi.evaluate("sample", model, store=path, run_name=name)
    kaoshi.rescore("a", "a-again", store=path, multi_policy="partial")
    kaoshi.vote(["a", "b", "c"], store=path, run_name="voted")
    one, two = tmp_path / "one.sqlite", tmp_path / "two.sqlite"
    kaoshi.evaluate("sample", model="random", shard="1/2", store=one, run_name="r-shard1of2")
    kaoshi.evaluate("sample", model="random", shard="2/2", store=two, run_name="r-shard2of2")
    kaoshi.merge([one, two], store=path)
    assert kept_runs(path) == {"a", "b", "c", "a-again", "voted", "r"}
    expected = counted_again(path, monkeypatch)
    with nothing_counted(monkeypatch):
        assert reported(path, keep=False) == expected


def test_a_kept_run_survives_what_leaves_its_rows_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new index (the request cache's, made by the first cached run), a VACUUM and `kaoshi store backup`
    change SQLite's schema version but not the runs' rows or their tables' layout: what was kept is still
    read, in the store and in its copy."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    expected = reported(path)  # counted and kept
    with sqlite3.connect(path) as db:
        db.execute("CREATE INDEX another ON samples (latency_s)")
    with sqlite3.connect(path) as db:
        db.execute("VACUUM")
    copy = tmp_path / "copy.sqlite"
    backup_store(copy, store=path)
    with nothing_counted(monkeypatch):
        assert reported(path, keep=False) == expected
        assert reported(copy, keep=False) == expected


def test_rows_a_report_cannot_read_fail_the_report_not_the_judge(tmp_path: Path) -> None:
    """A judge whose grades are stored ends well even where its run's counts cannot be kept (a group
    written unreadable by hand): the report then says what is wrong with the rows."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    with Store(path) as store:
        sql("UPDATE samples SET question_group = '{bad' WHERE run = 'mixed' AND question_id = 'q/4'")(store)
    outcome = kaoshi.judge("mixed", lambda prompt: "评分：2", store=path)
    assert outcome.graded > 0 and kept_runs(path) == set()
    with pytest.raises(StoreError, match="question_group"):
        summarize("mixed", store=path)
