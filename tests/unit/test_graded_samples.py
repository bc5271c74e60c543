"""A run's samples of one status, read by SQLite (kaoshi report --show, kaoshi samples --status), are the
ones filtering every sample gives, with the grades its report counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaoshi.api import graded_samples, stored_samples
from kaoshi.errors import InputError
from tests.support.stores import sample, stored_run

STATUSES = ("ok", "unparsed", "error", "ok", "ambiguous", "unparsed", "ok")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return stored_run(tmp_path / "s.sqlite", [sample(f"q{i}", status) for i, status in enumerate(STATUSES)])


@pytest.mark.parametrize("status", ["ok", "unparsed", "ambiguous", "error"])
def test_the_samples_of_a_status_are_those_of_every_sample(store: Path, status: str) -> None:
    every = stored_samples("r", store=store)
    picked = [s for s in every if s.status == status]
    assert stored_samples("r", store=store, status=status) == picked
    assert graded_samples("r", store=store, status=status) == picked
    assert [s.question_id for s in picked] == [f"q{i}" for i, s in enumerate(STATUSES) if s == status]
    assert graded_samples("r", store=store) == every


def test_an_unknown_status_is_refused_by_name(store: Path) -> None:
    with pytest.raises(InputError, match="no sample status 'wrong'"):
        graded_samples("r", store=store, status="wrong")
    assert stored_samples("r", store=store, status="wrong") == []  # as it always listed: nothing matches
