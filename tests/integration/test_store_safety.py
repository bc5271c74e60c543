"""The store under stress: another process's write lock, read-only files, files that are not kaoshi stores,
damaged pages. No accepted answer is dropped silently, and nothing that is not ours is written to."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.store import Store, StoreError
from tests.support import interruptions
from tests.support.stores import SPEC, damage_samples_table, digest, new_store, sample, stored_ids

_HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


def hold_write_lock(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the store's write lock (BEGIN IMMEDIATE) for `seconds`, then letting go."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
    return holder


# -- another process's write lock ---------------------------------------------------------------------------
@pytest.mark.slow
def test_every_sample_lands_when_another_process_holds_the_lock_past_one_retry(store_path: Path) -> None:
    new_store(store_path)
    holder = hold_write_lock(store_path, 3.0)  # longer than one attempt (1 s) and its back-off
    started = time.monotonic()
    with Store(store_path, lock_wait_s=60) as store:  # opening an existing store takes no write lock
        for i in range(5):
            store.add_sample("r", sample(f"q{i}"))
    assert holder.wait(timeout=30) == 0
    assert time.monotonic() - started >= 2.5  # it really waited for the holder
    assert stored_ids(store_path) == {f"q{i}" for i in range(5)}


@pytest.mark.slow
def test_giving_up_names_the_store_the_holder_and_the_answers_kept(store_path: Path) -> None:
    new_store(store_path)
    holder = hold_write_lock(store_path, 30.0)
    store = Store(store_path, lock_wait_s=1.5)
    try:
        with pytest.raises(StoreError) as info:
            store.add_sample("r", sample("q1"))
        message = str(info.value)
        assert message.startswith(f"{store_path} stayed locked by another process for ")
        assert f"pid {holder.pid} (" in message
        assert "1 answer(s) not written yet are kept in memory and written by the next write or on close" in (
            message
        )
    finally:
        holder.kill()
        holder.wait()
    store.add_sample("r", sample("q2"))  # the lock is gone: the kept answer goes first
    store.close()
    assert stored_ids(store_path) == {"q1", "q2"}


def test_close_says_how_many_answers_could_not_be_written(store_path: Path) -> None:
    new_store(store_path)
    other = sqlite3.connect(store_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another connection keeps the lock until after close
    store = Store(store_path, lock_wait_s=0.2)
    with pytest.raises(StoreError, match=r"1 answer\(s\) not written yet are kept in memory"):
        store.add_sample("r", sample("q1"))
    with pytest.raises(StoreError, match=r"2 answer\(s\) not written yet"):
        store.add_sample("r", sample("q2"))
    with pytest.raises(StoreError) as info:
        store.close()
    assert str(info.value).startswith(f"{store_path} stayed locked by another process")
    assert "2 answer(s) could not be written and are lost" in str(info.value)
    other.execute("ROLLBACK")
    other.close()
    assert stored_ids(store_path) == set()


def test_a_write_that_can_never_succeed_is_not_kept(store_path: Path) -> None:
    with Store(store_path) as store:
        with pytest.raises(sqlite3.IntegrityError):
            store.add_sample("no such run", sample("q1"))  # a caller's bug, raised as before
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q2"))
    assert stored_ids(store_path) == {"q2"}


# -- read-only stores ---------------------------------------------------------------------------------------
def test_a_store_opened_read_only_reads_and_refuses_writes_untouched(store_path: Path) -> None:
    new_store(store_path, 3)
    before = digest(store_path)
    with Store(store_path, read_only=True) as store:
        assert store.read_only
        assert [run.n_samples for run in store.runs()] == [3]
        assert len(store.samples("r")) == 3
        with pytest.raises(StoreError) as info:
            store.add_sample("r", sample("q9"))
        with pytest.raises(StoreError):
            store.open_run("new", SPEC)
    assert str(info.value) == f"{store_path} is open read-only (opened for reading): cannot write to it"
    assert digest(store_path) == before


def test_a_read_only_store_from_before_the_later_tables_is_read_unchanged(store_path: Path) -> None:
    new_store(store_path, 2)
    with sqlite3.connect(store_path) as db:
        db.execute("DROP TABLE run_owners")  # a store written by earlier kaoshi
        db.execute("DROP TABLE grades")
    before = digest(store_path)
    with Store(store_path, read_only=True) as store:
        assert store.get_run("r").n_samples == 2 and store.graders("r") == []
    assert digest(store_path) == before


def test_opening_a_missing_store_read_only_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store at"):
        Store(tmp_path / "missing" / "store.sqlite", read_only=True)
    assert not (tmp_path / "missing").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod; mode=ro is tested above")
def test_a_file_and_folder_without_write_permission_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    path = new_store(folder / "store.sqlite", 2)
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        for store in (Store(path), Store(path, read_only=True)):
            with store:
                assert store.read_only and len(store.samples("r")) == 2
                with pytest.raises(StoreError, match="is open read-only"):
                    store.add_sample("r", sample("q9"))
    finally:
        folder.chmod(0o755)


def test_reading_commands_leave_the_store_file_as_it_was(store_path: Path) -> None:
    from kaoshi.cli.main import main

    new_store(store_path, 3)
    before = digest(store_path)
    assert main(["samples", "r", "--store", str(store_path)]) == 0
    assert main(["report", "r", "--store", str(store_path)]) == 0
    assert digest(store_path) == before


# -- files that are not kaoshi stores ---------------------------------------------------------------------
def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO users (name) VALUES ('ada')")
    db.close()
    before = digest(path)
    for read_only in (False, True):
        with pytest.raises(StoreError) as info:
            Store(path, read_only=read_only)
        assert str(info.value) == (
            f"{path} is not a usable kaoshi store (another program's SQLite database, with tables users); "
            "left it untouched: pass another --store"
        )
    assert digest(path) == before
    with sqlite3.connect(path) as db:
        assert [row[0] for row in db.execute("SELECT name FROM sqlite_master")] == ["users"]
    db.close()


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database, just notes\n" * 200)
    before = digest(path)
    with pytest.raises(
        StoreError, match=r"notes\.sqlite is not a usable kaoshi store \(not an SQLite database"
    ):
        Store(path)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite"]


def test_a_store_from_a_newer_kaoshi_is_refused_before_anything_is_written(store_path: Path) -> None:
    new_store(store_path)
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
        db.execute("DROP TABLE grades")  # a table this kaoshi would add to a store of its own version
    db.close()
    before = digest(store_path)
    with pytest.raises(StoreError) as info:
        Store(store_path)
    assert str(info.value) == (
        f"{store_path} was written by a newer kaoshi (schema 99, this kaoshi reads up to 2); "
        "left it untouched: upgrade kaoshi (pip install -U kaoshi)"
    )
    assert digest(store_path) == before
    with sqlite3.connect(store_path) as db:
        assert "grades" not in {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    db.close()


def test_an_empty_sqlite_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite"
    path.touch()
    new_store(path, 1)
    assert stored_ids(path) == {"q0"}


# -- damaged pages ------------------------------------------------------------------------------------------


def test_a_damaged_store_is_named_with_the_way_to_recover_it(store_path: Path) -> None:
    new_store(store_path, 30)
    damage_samples_table(store_path)
    rescued = store_path.with_name("store-recovered.sqlite")
    with Store(store_path, read_only=True) as store, pytest.raises(StoreError) as info:
        store.samples("r")
    assert str(info.value) == (
        f"{store_path} is damaged (database disk image is malformed); recover what is readable with "
        f"`sqlite3 {store_path} .recover | sqlite3 {rescued}` (an sqlite3 from sqlite.org: some Linux builds "
        f"lack .recover) and pass --store {rescued}"
    )


# -- a full disk ------------------------------------------------------------------------------------------
class _DiskFullAfter:
    """A store connection whose sample writes fail as on a full disk once `room` of them were written."""

    def __init__(self, db: sqlite3.Connection, room: int) -> None:
        self._db, self.room = db, room

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        if sql.startswith("INSERT OR REPLACE INTO samples"):
            if self.room == 0:
                raise sqlite3.OperationalError("database or disk is full")
            self.room -= 1
        return self._db.execute(sql, params)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


class _BatchModel(Model):
    """Answers a whole chunk at once (like a local model's batch): every request of it is paid for before
    the first answer is stored."""

    default_batch_size = 16

    def __init__(self) -> None:
        super().__init__("batch", ModelOptions())
        self.asked: list[str] = []

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        batch = list(requests)
        self.asked += [r.id for r in batch]
        for request in batch:
            yield ModelOutput(request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}")


def test_a_full_disk_says_how_many_answers_it_lost(store_path: Path) -> None:
    model = _BatchModel()
    store = Store(store_path)
    store._writes._db = _DiskFullAfter(store._writes._db, room=3)  # type: ignore[assignment]
    with pytest.raises(StoreError) as during:
        kaoshi.evaluate("sample", model, run_name="r", store=store)
    with pytest.raises(StoreError) as closing:
        store.close()
    lost = len(model.asked) - 3  # paid for, and not in the store
    assert (len(model.asked), lost) == (16, 13)
    assert str(during.value) == (
        f"{store_path}: cannot write (database or disk is full); {lost} answer(s) not written yet are kept "
        "in memory and written by the next write or on close"
    )
    assert str(closing.value) == (
        f"{store_path}: cannot write (database or disk is full); {lost} answer(s) could not be written and "
        "are lost (the same command, run again, asks again)"
    )
    assert len(stored_ids(store_path)) == 3


# -- a store on a read-only file system ---------------------------------------------------------------------
_READ_ONLY_COMMANDS = r"""
import json, subprocess, sys
results = []
for argv in json.loads(sys.argv[1]):
    done = subprocess.run([sys.executable, "-m", "kaoshi.cli.main", *argv], capture_output=True, text=True)
    results.append([done.returncode, done.stdout, done.stderr])
print(json.dumps(results))
"""


def on_read_only_mount(folder: Path, commands: list[list[str]]) -> list[tuple[int, str, str]]:
    """Run kaoshi commands with `folder` mounted read-only (EROFS), in a user and mount namespace of
    their own (`unshare -rm`); skipped where the system allows none."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("needs unshare -rm (user and mount namespaces) to mount a folder read-only")
    mount = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && exec "$1" -c "$2" "$3"'
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", mount, str(folder), sys.executable, _READ_ONLY_COMMANDS,
         json.dumps(commands)],
        capture_output=True, text=True, env=interruptions.env(), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [(code, out, err) for code, out, err in json.loads(done.stdout)]


@pytest.mark.slow
def test_a_store_on_a_read_only_file_system_is_read_and_checked(tmp_path: Path) -> None:
    store = new_store(tmp_path / "shared" / "store.sqlite", 3)  # closed: every row in the file, no -wal
    reading = [
        ["runs", "--store", str(store), "--format", "json"],
        ["samples", "r", "--store", str(store), "--format", "jsonl"],
        ["report", "r", "--store", str(store), "--format", "json"],
        ["store", "check", "--store", str(store)],
    ]
    writing = [
        "run",
        "--benchmark",
        "sample",
        "--model",
        "constant:A",
        "--run-name",
        "new",
        "--store",
        str(store),
    ]
    *results, written = on_read_only_mount(store.parent, [*reading, writing])
    note = f"{store}: read as the file holds it (its folder is read-only, so SQLite's -shm cannot be made)\n"
    for (code, _, err), argv in zip(results, reading, strict=True):
        assert (code, err) == (0, note), argv  # read, and one line says how
    runs, samples, _, checked = (out for _, out, _ in results)
    assert json.loads(runs)[0]["samples"] == 3 and len(samples.splitlines()) == 3
    assert checked.startswith(f"{store}: ok\n  schema version 2; 1 run(s), 3 sample(s)")
    assert written[0] == 2
    assert f"{store} is open read-only (it is on a read-only file system): cannot write to it" in written[2]
    assert sorted(p.name for p in store.parent.iterdir()) == ["store.sqlite"]


_LEAVE_ROWS_IN_THE_WAL = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("DELETE FROM samples WHERE question_id = 'q0'")
os._exit(0)  # killed: the -wal keeps the delete, the file does not have it
"""


@pytest.mark.slow
def test_a_read_only_store_whose_wal_holds_rows_is_read_with_them(tmp_path: Path) -> None:
    store = new_store(tmp_path / "shared" / "store.sqlite", 3)
    subprocess.run([sys.executable, "-c", _LEAVE_ROWS_IN_THE_WAL, str(store)], check=True)
    Path(f"{store}-shm").unlink()  # copied without it, say: a read-only folder cannot make it again
    assert Path(f"{store}-wal").stat().st_size > 0
    [(code, out, err)] = on_read_only_mount(
        store.parent, [["samples", "r", "--store", str(store), "--format", "jsonl"]]
    )
    assert code == 0, err
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["q1", "q2"]  # the -wal's delete is seen
    assert "read from a copy in memory" in err
