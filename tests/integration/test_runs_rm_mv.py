"""kaoshi runs rm / mv (issue 30, point 2): a run removed or renamed with every row that names it, in one
transaction, after a confirmation; refused for an unknown name, an existing target or a run a live process
holds; never touching another run."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kaoshi.api import RemovedRun, RenamedRun, StoreError, remove_runs, rename_run
from kaoshi.cli.main import main
from kaoshi.store import Store
from tests.support.runs import SAMPLE_OPEN, judge_script


def kaoshi(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--store", str(store)])
    out, err = capsys.readouterr()
    return code, out, err


def snapshot(capsys: pytest.CaptureFixture[str], store: Path, run: str) -> tuple[str, str]:
    """The run's samples and report, as the commands print them."""
    code, samples, err = kaoshi(capsys, store, "samples", run, "--format", "jsonl")
    assert code == 0, err
    code, report, err = kaoshi(capsys, store, "report", run, "--format", "json")
    assert code == 0, err
    return samples, report


def rows_naming(store: Path, run: str) -> dict[str, int]:
    """How many rows of each table name the run."""
    db = sqlite3.connect(store)
    try:
        return {
            table: db.execute(f"SELECT COUNT(*) FROM {table} WHERE {column}=?", (run,)).fetchone()[0]
            for table, column in (
                ("runs", "name"), ("samples", "run"), ("grades", "run"), ("run_owners", "run"),
                ("leases", "run"), ("claims", "run"),
            )
        }  # fmt: skip
    finally:
        db.close()


def judged(capsys: pytest.CaptureFixture[str], store: Path, tmp_path: Path, run: str) -> None:
    """Grade the run's 4 open answers with a mock judge (so that it has grades to move)."""
    script = judge_script(tmp_path / "judge.jsonl", dict.fromkeys(SAMPLE_OPEN, 7))
    code, _, err = kaoshi(capsys, store, "judge", run, "--judge", f"mock:{script}")
    assert code == 0, err


class Terminal(io.StringIO):
    """stdin as a terminal that answers the confirmation with `answer`."""

    def isatty(self) -> bool:
        return True


def test_rm_removes_one_run_and_leaves_the_other_byte_identical(
    capsys: pytest.CaptureFixture[str], two_runs: Path
) -> None:
    before = snapshot(capsys, two_runs, "weak")
    code, out, err = kaoshi(capsys, two_runs, "runs", "rm", "strong", "--yes")
    assert code == 0, err
    assert out == "removed run 'strong' (44 samples, 0 grades)\n"
    assert set(rows_naming(two_runs, "strong").values()) == {0}
    assert snapshot(capsys, two_runs, "weak") == before
    code, out, _ = kaoshi(capsys, two_runs, "runs", "--format", "json")
    assert [row["run"] for row in json.loads(out)] == ["weak"]


def test_rm_asks_first_and_n_keeps_the_run(
    capsys: pytest.CaptureFixture[str], two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    code, out, err = kaoshi(capsys, two_runs, "runs", "rm", "weak")
    assert code == 0
    assert err == "remove run 'weak' (44 samples, 0 grades)? [y/N] nothing removed\n"
    assert out == ""
    assert rows_naming(two_runs, "weak")["samples"] == 44

    monkeypatch.setattr("sys.stdin", Terminal(""))  # end of input is no
    assert kaoshi(capsys, two_runs, "runs", "rm", "weak")[0] == 0
    assert rows_naming(two_runs, "weak")["samples"] == 44

    monkeypatch.setattr("sys.stdin", Terminal("n\ny\n"))  # asked run by run
    code, out, err = kaoshi(capsys, two_runs, "runs", "rm", "weak", "strong")
    assert code == 0, err
    assert err.count("? [y/N] ") == 2
    assert out == "removed run 'strong' (44 samples, 0 grades)\n"
    assert rows_naming(two_runs, "weak")["samples"] == 44


def test_rm_without_a_terminal_needs_yes(
    capsys: pytest.CaptureFixture[str], two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # piped: not a terminal, not asked
    code, out, err = kaoshi(capsys, two_runs, "runs", "rm", "weak")
    assert code == 2 and out == ""
    assert "not asking without a terminal on stdin" in err and "pass --yes" in err
    assert rows_naming(two_runs, "weak")["samples"] == 44


def test_rm_refuses_an_unknown_name_and_removes_nothing(
    capsys: pytest.CaptureFixture[str], two_runs: Path
) -> None:
    code, _, err = kaoshi(capsys, two_runs, "runs", "rm", "weak", "nope", "--yes")
    assert code == 2
    assert err == f"error: cannot remove run 'nope': no run of that name in {two_runs} (runs: strong, weak)\n"
    assert rows_naming(two_runs, "weak")["samples"] == 44  # one transaction: weak is still there


def test_rm_and_mv_refuse_a_run_a_live_process_holds(
    capsys: pytest.CaptureFixture[str], two_runs: Path
) -> None:
    with Store(two_runs) as store, store.hold("weak"):
        code, _, err = kaoshi(capsys, two_runs, "runs", "rm", "weak", "--yes")
        assert code == 2
        assert err.startswith("error: cannot remove run 'weak': it is being run by pid ")
        assert err.rstrip().endswith("wait for it to end, or stop that process first")
        code, _, err = kaoshi(capsys, two_runs, "runs", "mv", "weak", "other")
        assert code == 2 and err.startswith("error: cannot rename run 'weak': it is being run by pid ")
        with store.hold("starting"):  # a lease is taken before its run is made
            code, _, err = kaoshi(capsys, two_runs, "runs", "mv", "strong", "starting")
            assert code == 2 and "a run named 'starting' is being started by pid " in err
        # the other run is free
        assert kaoshi(capsys, two_runs, "runs", "mv", "strong", "best")[0] == 0
    assert rows_naming(two_runs, "weak")["samples"] == 44
    assert rows_naming(two_runs, "weak")["leases"] == 0  # released
    assert kaoshi(capsys, two_runs, "runs", "rm", "weak", "--yes")[0] == 0  # once released


def test_mv_moves_samples_and_grades_and_the_report_follows(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    judged(capsys, two_runs, tmp_path, "strong")
    with Store(two_runs, read_only=True) as store:
        (grader,) = store.graders("strong")
        grades = store.grades("strong", grader)
    assert len(grades) == 4
    samples_before, report_before = snapshot(capsys, two_runs, "strong")
    weak_before = snapshot(capsys, two_runs, "weak")

    code, out, err = kaoshi(capsys, two_runs, "runs", "mv", "strong", "best")
    assert code == 0, err
    assert out == "renamed run 'strong' to 'best' (44 samples, 4 grades moved)\n"
    assert set(rows_naming(two_runs, "strong").values()) == {0}
    assert rows_naming(two_runs, "best") == {
        "runs": 1, "samples": 44, "grades": 4, "run_owners": 1, "leases": 0, "claims": 0,
    }  # fmt: skip
    with Store(two_runs, read_only=True) as store:
        assert store.grades("best", grader) == grades
    samples_after, report_after = snapshot(capsys, two_runs, "best")
    assert samples_after == samples_before
    assert renamed(json.loads(report_before), "strong", "best") == json.loads(report_after)
    assert snapshot(capsys, two_runs, "weak") == weak_before


def renamed(document: Any, old: str, new: str) -> Any:
    """The report with the run's name changed where it names the run (not in the mock model's path)."""
    if isinstance(document, dict):
        return {
            k: new if k in ("run", "name") and v == old else renamed(v, old, new) for k, v in document.items()
        }
    if isinstance(document, list):
        return [renamed(v, old, new) for v in document]
    return document


def test_mv_refuses_an_existing_target_or_an_unknown_run(
    capsys: pytest.CaptureFixture[str], two_runs: Path
) -> None:
    code, _, err = kaoshi(capsys, two_runs, "runs", "mv", "strong", "weak")
    assert code == 2
    assert err == (
        f"error: cannot rename run 'strong' to 'weak': a run named 'weak' exists in {two_runs}; remove it "
        "first (kaoshi runs rm weak) or choose another name\n"
    )
    code, _, err = kaoshi(capsys, two_runs, "runs", "mv", "nope", "new")
    assert code == 2
    assert err == f"error: cannot rename run 'nope': no run of that name in {two_runs} (runs: strong, weak)\n"
    assert rows_naming(two_runs, "strong")["samples"] == rows_naming(two_runs, "weak")["samples"] == 44


def test_names_that_share_a_prefix_are_other_runs(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    """A shard's run (NAME-shard1of2) is a run of its own: rm / mv of NAME never touch it."""
    assert kaoshi(capsys, two_runs, "runs", "mv", "weak", "strong-shard1of2")[0] == 0
    shard = snapshot(capsys, two_runs, "strong-shard1of2")
    assert kaoshi(capsys, two_runs, "runs", "mv", "strong", "strong2")[0] == 0
    assert kaoshi(capsys, two_runs, "runs", "rm", "strong2", "--yes")[0] == 0
    assert snapshot(capsys, two_runs, "strong-shard1of2") == shard
    out = kaoshi(capsys, two_runs, "runs", "--format", "json")[1]
    assert [row["run"] for row in json.loads(out)] == ["strong-shard1of2"]


def test_the_api(two_runs: Path) -> None:
    planned = remove_runs(["weak", "strong", "weak"], store=two_runs, dry_run=True)
    assert planned == (RemovedRun("weak", 44, 0), RemovedRun("strong", 44, 0))
    assert rows_naming(two_runs, "weak")["samples"] == 44  # a dry run removes nothing

    with pytest.raises(StoreError, match=r"no run of that name .* \(runs: strong, weak\)"):
        remove_runs(["strong", "nope"], store=two_runs)
    assert rows_naming(two_runs, "strong")["samples"] == 44

    with Store(two_runs) as store:  # an open Store is used as it is, and stays open
        assert rename_run("weak", "w", store=store) == RenamedRun("weak", "w", 44, 0)
        assert [run.name for run in store.runs()] == ["strong", "w"]
        with pytest.raises(StoreError, match="a run named 'strong' exists"):
            store.rename_run("w", "strong")
        with pytest.raises(StoreError, match="already has that name"):
            store.rename_run("w", "w")
        with pytest.raises(StoreError, match="not empty"):
            store.rename_run("w", "")
    assert remove_runs("w", store=two_runs) == (RemovedRun("w", 44, 0),)  # one name as a string
    assert set(rows_naming(two_runs, "w").values()) == {0}
    with Store(two_runs, read_only=True) as store, pytest.raises(StoreError, match="open read-only"):
        store.remove_runs(["strong"])
