"""Statuses, methods and policies are enums stored as their plain values; a stored value none of them knows
(another program's row, a newer kaoshi's) is refused naming the store, the table, the row and the value."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.errors import InputError
from kaoshi.qtypes import grade_answer
from kaoshi.store import GradeRecord, GradeStatus, Method, RunSpec, RunStatus, SampleStatus, Store, StoreError
from kaoshi.store.records import MultiPolicy
from kaoshi.store.rows import stored
from tests.support.questions import SCORED_MULTI
from tests.support.stores import SPEC, sample

ENUMS = (Method, MultiPolicy, RunStatus, SampleStatus, GradeStatus)


@pytest.mark.parametrize("kind", ENUMS, ids=lambda kind: kind.__name__)
def test_every_member_is_its_value_as_text(kind: type[MultiPolicy]) -> None:
    for member in kind:
        assert isinstance(member, str) and member == member.value
        assert str(member) == f"{member}" == f"{member:>0}" == member.value
        assert json.dumps({"x": member}) == json.dumps({"x": member.value})
        assert kind(member.value) is member and {member.value: 1}[member] == 1


def test_runs_samples_and_grades_round_trip_as_enums(store_path: Path) -> None:
    spec = replace(SPEC, method="loglik", multi_policy="partial")  # given by value: held as the members
    assert spec.method is Method.LOGLIK and spec.multi_policy is MultiPolicy.PARTIAL
    assert spec.to_json()["method"] == "loglik" and type(spec.to_json()["multi_policy"]) is str
    with Store(store_path) as store:
        store.open_run("r", spec)
        store.add_sample("r", sample("q1", status=SampleStatus.UNPARSED, answer=None, correct=False))
        store.add_sample("r", sample("q2", status="ambiguous", answer=None, correct=False))
        store.add_grade("r", GradeRecord("q1", "careful:j", GradeStatus.PARTIAL, None, None, ({"a": 1},)))
        store.finish_run("r")
    with Store(store_path, read_only=True) as store:
        run = store.get_run("r")
        got = {s.question_id: s.status for s in store.samples("r")}
        grade = store.grades("r", "careful:j")["q1"]
    assert run.status is RunStatus.FINISHED and run.spec == spec
    assert run.spec.method is Method.LOGLIK and run.spec.multi_policy is MultiPolicy.PARTIAL
    assert got == {"q1": SampleStatus.UNPARSED, "q2": SampleStatus.AMBIGUOUS}
    assert all(type(status) is SampleStatus for status in got.values())
    assert grade.status is GradeStatus.PARTIAL and grade.rounds == ({"a": 1},)
    assert sample("q", status=SampleStatus.OK).to_json()["status"] == "ok"
    # the file holds the plain text, as before the enums
    db = sqlite3.connect(store_path)
    assert db.execute("SELECT status FROM runs").fetchall() == [("finished",)]
    assert sorted(db.execute("SELECT status FROM samples").fetchall()) == [("ambiguous",), ("unparsed",)]
    assert db.execute("SELECT status FROM grades").fetchall() == [("partial",)]
    stored = json.loads(db.execute("SELECT spec FROM runs").fetchone()[0])
    assert (stored["method"], stored["multi_policy"]) == ("loglik", "partial")
    db.close()


def _tamper(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    with db:
        db.execute(sql)
    db.close()


def _store_with_a_run(path: Path) -> None:
    with Store(path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1"))
        store.add_grade("r", GradeRecord("q1", "careful:j", GradeStatus.OK, 5.0, 1.0))
        store.finish_run("r")


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        (
            "UPDATE samples SET status='skipped'",
            "table samples, run 'r', question 'q1': unknown status 'skipped' "
            "(known: ok, unparsed, ambiguous, error)",
        ),
        (
            "UPDATE runs SET status='paused'",
            "table runs, run 'r': unknown status 'paused' (known: running, held, interrupted, finished)",
        ),
        (
            "UPDATE runs SET spec=json_set(spec, '$.multi_policy', 'lenient')",
            "table runs, run 'r': unknown multi_policy (in its spec) 'lenient' (known: exact, partial, f1)",
        ),
        (
            "UPDATE runs SET spec=json_set(spec, '$.method', 'sampling')",
            "table runs, run 'r': unknown method (in its spec) 'sampling' (known: generate, loglik, vote)",
        ),
        (
            "UPDATE grades SET status='maybe'",
            "table grades, run 'r', question 'q1', grader 'careful:j': unknown status 'maybe' "
            "(known: ok, unparsed, error, partial)",
        ),
    ],
    ids=["sample-status", "run-status", "multi-policy", "method", "grade-status"],
)
def test_an_unknown_stored_value_is_refused_naming_where_it_is(
    store_path: Path, sql: str, named: str
) -> None:
    _store_with_a_run(store_path)
    _tamper(store_path, sql)
    with Store(store_path, read_only=True) as store, pytest.raises(StoreError) as refused:
        store.get_run("r")
        store.samples("r")
        store.grades("r", "careful:j")
    assert str(refused.value).startswith(f"{store_path}: {named}; ")


def test_an_unknown_multi_policy_is_never_graded_as_exact(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before the enums, a stored policy the grader did not know was graded `exact` without a word."""
    _store_with_a_run(store_path)
    _tamper(store_path, "UPDATE runs SET spec=json_set(spec, '$.multi_policy', 'lenient')")
    capsys.readouterr()
    for args in (["report", "r"], ["rescore", "r", "--run-name", "r2"]):
        assert main([*args, "--store", str(store_path)]) == 2, args
        err = capsys.readouterr().err
        assert re.search(r"unknown multi_policy \(in its spec\) 'lenient' \(known: exact, partial, f1\)", err)
    with pytest.raises(InputError, match=r"unknown multi policy 'lenient' \(known: exact, partial, f1\)"):
        replace(SPEC, multi_policy="lenient")
    with pytest.raises(InputError, match="unknown multi policy 'lenient'"):
        grade_answer(SCORED_MULTI, frozenset("A"), "lenient")
    with pytest.raises(InputError, match=r"unknown method 'sampling' \(known: generate, loglik, vote\)"):
        RunSpec.from_json({**SPEC.to_json(), "method": "sampling"})


def test_stored_names_the_row() -> None:
    assert stored(SampleStatus, "ok", Path("s.sqlite"), "row", "status") is SampleStatus.OK
    with pytest.raises(StoreError, match=r"^s\.sqlite: row: unknown status None \(known: "):
        stored(SampleStatus, None, Path("s.sqlite"), "row", "status")
