"""kaoshi store checkpoint / backup / check: a store safe to copy, a consistent copy while runs write, and
a damaged store named as such."""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from kaoshi.api.store_tools import backup_store, check_store, checkpoint_store
from kaoshi.cli import store_cmd
from kaoshi.cli.store_option import add_store_option
from kaoshi.store import Store, StoreError
from kaoshi.store.schema import SCHEMA_VERSION
from tests.support.stores import SPEC, damage_samples_table, digest, new_store, sample, stored_ids


def store_command(*argv: str) -> int:
    """`kaoshi [ARGV]` for the store command alone (the parser main builds, with only this command)."""
    parser = argparse.ArgumentParser(prog="kaoshi")
    add_store_option(parser, top_level=True)
    store_cmd.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


def test_a_copy_of_the_file_alone_misses_answers_until_a_checkpoint(store_path: Path, tmp_path: Path) -> None:
    new_store(store_path)
    store = Store(store_path)  # open, as a crashed run leaves it: recent answers are in the -wal only
    for i in range(20):
        store.add_sample("r", sample(f"q{i}"))
    (tmp_path / "early").mkdir()
    early = Path(shutil.copy(store_path, tmp_path / "early"))
    assert Path(f"{store_path}-wal").stat().st_size > 0
    assert stored_ids(early) == set()  # what the issue found: the -wal held them

    result = checkpoint_store(store_path)
    assert result.path == store_path and result.wal_bytes > 0
    assert Path(f"{store_path}-wal").stat().st_size == 0
    (tmp_path / "late").mkdir()
    late = Path(shutil.copy(store_path, tmp_path / "late"))
    assert stored_ids(late) == {f"q{i}" for i in range(20)}
    store.close()


def test_checkpoint_command(store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1"))
        assert store_command("store", "checkpoint", "--store", str(store_path)) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"checkpointed {store_path} (")
    assert out.rstrip().endswith("-wal folded in): the file alone now holds every committed answer")


def test_backup_is_consistent_while_another_connection_writes(store_path: Path, tmp_path: Path) -> None:
    new_store(store_path)
    writing = threading.Event()

    def run() -> None:
        with Store(store_path) as writer:
            for i in range(300):
                writer.add_sample("r", sample(f"q{i}"))
                writing.set()

    thread = threading.Thread(target=run)
    thread.start()
    writing.wait(timeout=30)
    out = tmp_path / "copies" / "backup.sqlite"
    result = backup_store(out, store=store_path)
    thread.join()
    assert sorted(p.name for p in out.parent.iterdir()) == ["backup.sqlite"]  # one file, no -wal
    with Store(out, read_only=True) as copy:
        assert copy.get_run("r").n_samples == result.samples
    assert 0 < result.samples <= 300 and result.runs == 1
    assert check_store(out).ok
    assert len(stored_ids(store_path)) == 300


def test_backup_never_overwrites_and_refuses_what_is_not_a_store(store_path: Path, tmp_path: Path) -> None:
    new_store(store_path, 1)
    taken = tmp_path / "taken.sqlite"
    taken.write_text("mine")
    with pytest.raises(StoreError, match=r"taken\.sqlite exists; a backup never overwrites a file"):
        backup_store(taken, store=store_path)
    assert taken.read_text() == "mine"
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users (id INTEGER)")
    db.close()
    before = digest(other)
    with pytest.raises(StoreError, match="not a usable kaoshi store"):
        backup_store(tmp_path / "copy.sqlite", store=other)
    assert digest(other) == before and not (tmp_path / "copy.sqlite").exists()


def test_backup_command(store_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new_store(store_path, 2)
    out = tmp_path / "b.sqlite"
    assert store_command("--store", str(store_path), "store", "backup", str(out)) == 0
    assert capsys.readouterr().out.startswith(f"backed up {store_path} to {out}: 1 run(s), 2 sample(s), ")
    assert stored_ids(out) == {"q0", "q1"}


def test_check_reports_counts_and_the_unfolded_wal(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1"))
        before = digest(store_path)
        result = check_store(store_path)
        assert result.ok and (result.schema_version, result.runs, result.samples) == (SCHEMA_VERSION, 1, 1)
        assert result.wal_bytes > 0
        assert store_command("store", "check", "--store", str(store_path)) == 0
        assert digest(store_path) == before  # checking reads only
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [f"{store_path}: ok", "  schema version 2; 1 run(s), 1 sample(s), 0 grade(s)"]
    assert "-wal: copy it with the file, or run 'kaoshi store checkpoint'" in lines[2]


def test_check_of_a_damaged_store_exits_2_with_the_way_to_recover(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new_store(store_path, 30)
    damage_samples_table(store_path)
    result = check_store(store_path)
    assert not result.ok and result.advice is not None and ".recover" in result.advice
    assert store_command("store", "check", "--store", str(store_path)) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"error: {store_path} is not ok:"
    assert any("malformed" in line or "corrupt" in line.lower() for line in err[1:])
    assert err[-1].startswith(f"  recover what is readable with `sqlite3 {store_path} .recover")


def test_check_of_another_programs_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("plain text")
    assert store_command("store", "check", "--store", str(path)) == 2
    assert "is not a usable kaoshi store" in capsys.readouterr().err
    assert path.read_text() == "plain text"


def test_a_missing_store_names_the_ones_beside_it(tmp_path: Path) -> None:
    new_store(tmp_path / "demo.sqlite")
    with pytest.raises(StoreError, match=r"no store at .*kaoshi\.sqlite; found .*demo\.sqlite beside it"):
        check_store(tmp_path / "kaoshi.sqlite")
    assert not (tmp_path / "kaoshi.sqlite").exists()
