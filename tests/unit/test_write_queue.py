"""Writing several answers in one transaction (Store.add_samples): all of them committed together, and a
refusal midway keeps what went before it, as writing them one at a time would."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from kaoshi.store import Store, StoreError
from tests.support.stores import SPEC, sample, stored_ids


class _FullAfter:
    """A store connection that refuses sample writes as on a full disk once `room` were executed, and
    counts the transactions committed."""

    def __init__(self, db: sqlite3.Connection, room: int) -> None:
        self._db, self.room, self.commits = db, room, 0

    def execute(self, sql: str, params: Sequence[object] = ()) -> sqlite3.Cursor:
        if sql.startswith("INSERT OR REPLACE INTO samples"):
            if self.room == 0:
                raise sqlite3.OperationalError("database or disk is full")
            self.room -= 1
        self.commits += sql == "COMMIT"
        return self._db.execute(sql, params)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def _store(path: Path, room: int) -> tuple[Store, _FullAfter]:
    store = Store(path)
    store.open_run("r", SPEC)
    connection = _FullAfter(store._writes._db, room)
    store._writes._db = connection  # type: ignore[assignment]
    return store, connection


def test_answers_written_together_are_one_transaction(store_path: Path) -> None:
    store, connection = _store(store_path, room=100)
    store.add_samples("r", [sample(f"q{i}") for i in range(5)])
    assert connection.commits == 1
    assert store.unwritten_answers == 0
    store.close()
    assert stored_ids(store_path) == {f"q{i}" for i in range(5)}


def test_a_refusal_midway_keeps_the_answers_before_it_and_counts_the_rest(store_path: Path) -> None:
    store, _ = _store(store_path, room=3)
    with pytest.raises(StoreError, match=r"2 answer\(s\) not written yet are kept in memory"):
        store.add_samples("r", [sample(f"q{i}") for i in range(5)])
    assert store.unwritten_answers == 2
    assert stored_ids(store_path) == {"q0", "q1", "q2"}  # committed, readable by another connection
    with pytest.raises(StoreError, match=r"2 answer\(s\) could not be written and are lost"):
        store.close()
    assert stored_ids(store_path) == {"q0", "q1", "q2"}


def test_the_kept_answers_go_first_once_the_store_takes_writes_again(store_path: Path) -> None:
    store, connection = _store(store_path, room=1)
    with pytest.raises(StoreError):
        store.add_samples("r", [sample("q0"), sample("q1")])
    connection.room = 100
    store.add_samples("r", [sample("q2")])
    assert store.unwritten_answers == 0
    store.close()
    assert stored_ids(store_path) == {"q0", "q1", "q2"}


def test_a_later_sample_of_a_question_replaces_it_within_one_group(store_path: Path) -> None:
    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_samples("r", [sample("q0", response="first"), sample("q0", response="second")])
        assert [s.response for s in store.samples("r")] == ["second"]
