"""`kaoshi samples` streams (issue 42): the first line comes before the rest is read, in question order,
through an index a store gains when opened for writing."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from kaoshi.api.summary import iter_stored_samples
from kaoshi.store import Store
from tests.support.stores import SPEC, sample


def test_the_samples_of_a_run_stream_in_question_order_through_the_index(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.open_run("r", replace(SPEC, repeats=2))
        for position in (3, 1, 2, 0):  # written out of order, as concurrent answers arrive
            for k in (1, 0):
                store.add_sample("r", replace(sample(f"law/{position}"), position=position, sample=k))
    with sqlite3.connect(path) as db:
        plan = " ".join(
            str(row)
            for row in db.execute(
                "EXPLAIN QUERY PLAN SELECT * FROM samples WHERE run=? ORDER BY position", ("r",)
            )
        )
    assert "samples_by_position" in plan and "TEMP B-TREE" not in plan  # no sort before the first row
    with Store(path, read_only=True) as store:
        stream = iter_stored_samples(store, "r")
        first = next(stream)
        assert (first.position, first.sample) == (0, 0)
        assert [(s.position, s.sample) for s in stream] == [
            (0, 1),
            (1, 0),
            (1, 1),
            (2, 0),
            (2, 1),
            (3, 0),
            (3, 1),
        ]
        assert [s.position for s in iter_stored_samples(store, "r", "error")] == []
