"""The SQLite store: runs with frozen specs, samples committed one by one, resume, mismatch refusal."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.store import RunSpec, Store, StoreError, run_coverage
from kaoshi.store.schema import TABLES
from tests.support.stores import SPEC, sample


def test_samples_round_trip(store_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1", logprobs={"A": -0.5, "AB": -0.1}))
        store.add_sample("r", sample("q2", qtype="judge", gold=False, answer=True, correct=False, score=0.0))
        store.add_sample(
            "r", sample("q3", status="error", answer=None, correct=None, score=None, error="boom")
        )
        got = {s.question_id: s for s in store.samples("r")}
    assert got["q1"] == sample("q1", logprobs={"A": -0.5, "AB": -0.1})
    assert got["q2"].gold is False and got["q2"].answer is True and got["q2"].correct is False
    assert got["q3"].error == "boom"


def test_wal_mode_and_immediate_commit(store_path: Path) -> None:
    store = Store(store_path)
    store.open_run("r", SPEC)
    store.add_sample("r", sample("q1"))
    # another connection sees the sample at once: nothing waits for the run to end
    other = sqlite3.connect(store_path)
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert other.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 1
    store.close()


def test_resume_and_finished_ids(store_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1"))
        store.add_sample("r", sample("q2", status="error", error="timeout"))
        store.finish_run("r")
    with Store(store_path) as store:
        run = store.open_run("r", replace(SPEC, kaoshi_version="0.2.0"))
        assert run.status == "running" and run.n_samples == 2
        assert store.finished_ids("r") == {"q1"}  # errors are tried again


def test_spec_mismatch_is_refused_with_the_differences(store_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        with pytest.raises(StoreError) as info:
            store.open_run("r", replace(SPEC, model="constant:A", seed=3))
    assert str(info.value) == (
        "run 'r' already exists with a different spec (model: stored 'random', now 'constant:A'; "
        "seed: stored 0, now 3); choose another --run-name to start a new run"
    )


def test_unknown_run_and_bad_file(store_path: Path, tmp_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("a", SPEC)
        with pytest.raises(StoreError, match=r"no run named 'b' in .* \(runs: a\)"):
            store.get_run("b")
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable kaoshi store"):
        Store(junk)


def test_spec_json_round_trip() -> None:
    assert RunSpec.from_json(SPEC.to_json()) == SPEC


def test_a_stored_default_split_of_none_resumes_under_the_effective_split() -> None:
    """Earlier kaoshi stored None for a loader's default split; the effective one is recorded now."""
    old = replace(SPEC, split=None)
    assert old.differences(replace(SPEC, split="val")) == []
    assert replace(SPEC, split="val").differences(replace(SPEC, split="test")) == [("split", "val", "test")]


def test_a_run_whose_process_is_gone_reads_as_interrupted(store_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("alive", SPEC)  # this process owns it
        store.open_run("killed", SPEC)
        store.open_run("stopped", SPEC)
        store.interrupt_run("stopped")  # Ctrl-C: marked by the CLI itself
        store.open_run("done", SPEC)
        store.finish_run("done")
        store.interrupt_run("done")  # a finished run stays finished
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE run_owners SET pid=? WHERE run='killed'", (int(dead.stdout),))
    with Store(store_path) as store:
        status = {run.name: run.status for run in store.runs()}
        assert status == {
            "alive": "running",
            "killed": "interrupted",
            "stopped": "interrupted",
            "done": "finished",
        }
        assert store.open_run("killed", SPEC).status == "running"  # resuming claims it again
        assert run_coverage(store.get_run("stopped"), []).running  # interrupted is incomplete too


def test_a_store_from_before_run_owners_opens_and_its_runs_stay_running(store_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
    with sqlite3.connect(store_path) as db:
        db.execute("DROP TABLE run_owners")  # what a store written by earlier kaoshi looks like
    with Store(store_path) as store:
        assert store.get_run("r").status == "running"  # no owner recorded: nothing says it died
        store.open_run("r", SPEC)
        store.finish_run("r")
        assert store.get_run("r").status == "finished"


@pytest.mark.parametrize(
    ("table", "column", "value", "said"),
    [
        ("runs", "spec", "{not json", "table runs, run 'r': its spec is not readable JSON"),
        ("runs", "spec", "[1, 2]", "table runs, run 'r': its spec is not a JSON object"),
        ("runs", "spec", "{}", "table runs, run 'r': its spec cannot be read (TypeError"),
        (
            "samples",
            "logprobs",
            "{oops",
            "table samples, run 'r', question 'q1': its logprobs is not readable",
        ),
        # a question as schema 2 holds it, once in `texts`, and as rows from before it hold it, inline
        ("texts", "body", "[[[", "table samples, run 'r', question 'q1': its question is not readable"),
        (
            "samples",
            "question_ref = NULL, question",
            "[[[",
            "table samples, run 'r', question 'q1': its question is not readable",
        ),
        (
            "samples",
            "question_ref",
            b"\0" * 16,
            "table samples, run 'r', question 'q1': its question is held in ",
        ),
    ],
)
def test_a_damaged_json_column_names_the_store_row_and_column(
    store_path: Path, table: str, column: str, value: str | bytes, said: str
) -> None:
    """A row written by hand or by another program is a StoreError naming where, not an internal error."""
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1", logprobs={"A": -0.5}))
    with sqlite3.connect(store_path) as db:
        db.execute(f"UPDATE {table} SET {column} = ?", (value,))
    with Store(store_path) as store, pytest.raises(StoreError) as raised:
        list(store.samples("r")) if table != "runs" else store.runs()
    assert str(raised.value).startswith(f"{store_path}: {said}")


# Text columns added to samples after the first stores were written: each one's value, as a backend sets it.
ADDED_TEXT_COLUMNS = {"served_model": "gpt-4o-mini-2024-07-18", "reasoning": "先排除A，再看C：答案是C。"}


@pytest.mark.parametrize(("column", "value"), ADDED_TEXT_COLUMNS.items())
def test_an_added_text_column_round_trips_through_the_store(
    store_path: Path, column: str, value: str
) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1", **{column: value}))
        store.add_sample("r", sample("q2"))
    with Store(store_path, read_only=True) as store:
        got = {s.question_id: s for s in store.samples("r")}
    assert got["q1"] == sample("q1", **{column: value})
    assert getattr(got["q2"], column) is None


@pytest.mark.parametrize("column", ADDED_TEXT_COLUMNS)
def test_the_samples_table_declares_the_added_column(column: str) -> None:
    assert f"{column} TEXT," in TABLES["samples"]
