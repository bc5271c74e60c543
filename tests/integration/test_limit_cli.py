"""`kaoshi run --limit N` over an exam of three subjects: N of each, a smoke test whose default name is not
the full run's, and runs stored when `--limit` was a cap in all still resumed by their names (issue 30)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from tests.support.files import write_jsonl

# Three subjects, interleaved, and one question with no subject (a group of its own).
SUBJECTS = ["数学", "物理", "数学", "化学", "数学", "物理", "化学", "数学", None, "化学"]
FULL = "three-mock_mock-generate"  # the default name of the full run


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def run(tmp_path: Path, store_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """`kaoshi run` of the three-subject exam with a mock model that answers every question, from the
    store's folder."""
    monkeypatch.chdir(store_path.parent)
    rows: list[dict[str, object]] = [{"exam": {"name": "three"}}]
    for i, subject in enumerate(SUBJECTS):
        row = {"id": f"q{i}", "type": "single", "question": f"题{i}", "options": {"A": "1", "B": "2"}}
        rows.append({**row, "answer": "A", **({"subject": subject} if subject else {})})
    exam = write_jsonl(tmp_path / "three.jsonl", rows)
    write_jsonl(tmp_path / "mock", [{"id": f"q{i}", "response": "答案：A"} for i in range(len(SUBJECTS))])
    # The model spec is recorded in the name: a short relative path keeps FULL readable.
    return ("run", "--data", str(exam), "--model", "mock:mock", "--store", str(store_path), "--no-report")


def asked(store_path: Path, name: str) -> list[str]:
    with sqlite3.connect(store_path) as db:
        rows = db.execute("SELECT question_id FROM samples WHERE run=? ORDER BY position", (name,))
        return [row[0] for row in rows]


def test_limit_takes_the_first_n_of_every_subject(
    capsys: pytest.CaptureFixture[str],
    run: tuple[str, ...],
    store_path: Path,
) -> None:
    code, _, err = kaoshi(capsys, *run, "--limit", "2")
    assert code == 0, err
    assert f"run '{FULL}-limit2': 7 new" in err
    # 数学 q0 q2, 物理 q1 q5, 化学 q3 q6, no subject q8: each subject present, in the exam's order
    assert asked(store_path, f"{FULL}-limit2") == ["q0", "q1", "q2", "q3", "q5", "q6", "q8"]
    code, _, err = kaoshi(capsys, *run, "--limit", "2", "--limit-total", "3")
    assert code == 0 and f"run '{FULL}-limit2-total3': 3 new" in err
    assert asked(store_path, f"{FULL}-limit2-total3") == ["q0", "q1", "q2"]


def test_a_smoke_test_then_the_full_run_are_two_runs(
    capsys: pytest.CaptureFixture[str], run: tuple[str, ...]
) -> None:
    code, _, err = kaoshi(capsys, *run, "--limit", "3")
    # 数学 3, 物理 its 2, 化学 3, the subject-less 1
    assert code == 0 and f"run '{FULL}-limit3': 9 new, 0 already stored" in err
    code, _, err = kaoshi(capsys, *run)
    assert code == 0 and f"run '{FULL}': 10 new, 0 already stored" in err
    code, _, err = kaoshi(capsys, *run, "--limit", "3")  # the smoke test still resumes as itself
    assert code == 0 and f"run '{FULL}-limit3': 0 new, 9 already stored" in err


def test_a_run_name_given_with_another_limit_is_refused(
    capsys: pytest.CaptureFixture[str], run: tuple[str, ...]
) -> None:
    assert kaoshi(capsys, *run, "--limit", "2", "--run-name", "mine")[0] == 0
    code, _, err = kaoshi(capsys, *run, "--limit", "3", "--run-name", "mine")
    assert code == 2
    assert "run 'mine' already exists with a different spec" in err
    assert "limit_per_subject: stored 2, now 3" in err and "choose another --run-name" in err
    code, _, err = kaoshi(capsys, *run, "--limit-total", "2", "--run-name", "mine")
    assert code == 2 and "limit: stored None, now 2" in err and "limit_per_subject: stored 2, now None" in err


def _as_stored_before(store_path: Path, name: str) -> None:
    """The run's spec as kaoshi stored it before --limit was per subject: no limit_per_subject key."""
    with sqlite3.connect(store_path) as db:
        spec = json.loads(db.execute("SELECT spec FROM runs WHERE name=?", (name,)).fetchone()[0])
        del spec["limit_per_subject"]
        db.execute("UPDATE runs SET spec=? WHERE name=?", (json.dumps(spec), name))


def test_a_run_stored_before_resumes(
    capsys: pytest.CaptureFixture[str],
    run: tuple[str, ...],
    store_path: Path,
) -> None:
    for name, options in (("old-full", ()), ("old-limited", ("--limit-total", "3"))):
        assert kaoshi(capsys, *run, *options, "--run-name", name)[0] == 0
        _as_stored_before(store_path, name)
        code, _, err = kaoshi(capsys, *run, *options, "--run-name", name)
        assert code == 0 and "0 new" in err, err


def test_a_run_limited_under_the_full_runs_name_before_resumes_by_its_name(
    capsys: pytest.CaptureFixture[str],
    run: tuple[str, ...],
    store_path: Path,
) -> None:
    """Earlier, `kaoshi run X --limit 3` stored 3 questions in all under the full run's default name. Its
    name is given to resume it (no default name is looked up under an earlier naming); the full run is
    refused there, naming what differs, and renaming the limited run (`kaoshi runs mv`) frees the name."""
    assert kaoshi(capsys, *run, "--limit-total", "3", "--run-name", FULL)[0] == 0
    _as_stored_before(store_path, FULL)
    code, _, err = kaoshi(capsys, *run, "--limit-total", "3", "--run-name", FULL)
    assert code == 0 and "0 new, 3 already stored" in err
    code, _, err = kaoshi(capsys, *run)
    assert code == 2 and "limit: stored 3, now None" in err and "choose another --run-name" in err
    assert kaoshi(capsys, "runs", "mv", FULL, f"{FULL}-total3", "--store", str(store_path))[0] == 0
    code, _, err = kaoshi(capsys, *run)
    assert code == 0 and f"run '{FULL}': 10 new" in err
    code, _, err = kaoshi(capsys, *run, "--limit-total", "3")
    assert code == 0 and f"run '{FULL}-total3': 0 new, 3 already stored" in err
