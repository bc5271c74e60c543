"""`kaoshi run --sample N --seed S` (issue 43): a stratified random sample of the exam, asked with the
prompts a full run gives those questions, resumed without a question asked twice, and reported with the
full exam's estimated accuracy."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kaoshi.analysis.estimate import estimate_accuracy
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.data.subsets import Subset
from kaoshi.runner.asked import counted, sample_record

SAMPLED = "sample-constant_A-generate-sample20seed3"  # the default name
FULL = "sample-constant_A-generate"


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run_args(store: Path) -> tuple[str, ...]:
    """`kaoshi run` of the sample exam with a model that always answers A."""
    return ("run", "--benchmark", "sample", "--model", "constant:A", "--store", str(store), "--no-report")


def stored(store: Path, run: str) -> dict[str, str]:
    with sqlite3.connect(store) as db:
        return dict(db.execute("SELECT question_id, prompt FROM samples WHERE run = ?", (run,)).fetchall())


def test_a_sample_asks_its_draw_with_the_full_runs_prompts_and_estimates_the_exam(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    base = run_args(store_path)
    code, _, err = kaoshi(capsys, *base, "--sample", "20", "--seed", "3")
    assert code == 0, err
    exam = load_exam_result("sample").exam
    record = sample_record(exam, 20, 3)
    asked = stored(store_path, SAMPLED)
    drawn = [q for q in exam.questions if q.id in asked]
    assert len(asked) == 20 and Subset.from_json(record).strata == Subset.from_json(record).strata
    # the prompts a full run gives the same questions (exemplars and demos from the whole exam)
    assert kaoshi(capsys, *base)[0] == 0
    full = stored(store_path, FULL)
    assert all(asked[qid] == full[qid] for qid in asked)
    # resumed: nothing asked again
    code, _, err = kaoshi(capsys, *base, "--sample", "20", "--seed", "3")
    assert code == 0 and "0 new, 20 already stored, 0 error(s)" in err, err
    assert stored(store_path, SAMPLED) == asked
    code, out, _ = kaoshi(capsys, "report", SAMPLED, "--format", "json", "--store", str(store_path))
    report = json.loads(out)
    assert report["spec"]["sample"] == record and report["spec"]["n_questions"] == len(exam)
    subset = Subset.from_json(record)
    by = report["groups"][subset.by]
    found = {name: (tally["correct"], tally["graded"] - tally["judged"]) for name, tally in by.items()}
    expected = estimate_accuracy({n: s.counted for n, s in subset.strata.items()}, found)
    assert report["estimate"] == expected.to_json()
    assert sum(s.counted for s in subset.strata.values()) == sum(counted(q) for q in exam.questions)
    assert {q.id for q in drawn} == set(asked)
    code, out, _ = kaoshi(capsys, "runs", "--store", str(store_path))
    assert "sample of 20 (seed 3)" in out and "20/20" in out


def test_another_seed_draws_another_sample_under_another_name(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    base = run_args(store_path)
    assert kaoshi(capsys, *base, "--sample", "20", "--seed", "3")[0] == 0
    assert kaoshi(capsys, *base, "--sample", "20", "--seed", "4")[0] == 0
    other = stored(store_path, "sample-constant_A-generate-sample20seed4")
    assert len(other) == 20 and set(other) != set(stored(store_path, SAMPLED))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--sample", "20", "--limit", "2"), "--sample draws from the whole exam: leave out --limit"),
        (("--sample", "20", "--shard", "1/2"), "--sample draws from the whole exam: leave out --shard"),
        (("--sample", "0"), "--sample must be > 0"),
        (("--sample", "4000"), "--sample 4000: draw between 1 and the exam's"),
    ],
)
def test_a_sample_that_cannot_be_drawn_is_refused(
    capsys: pytest.CaptureFixture[str], store_path: Path, extra: tuple[str, ...], message: str
) -> None:
    base = run_args(store_path)
    code, _, err = kaoshi(capsys, *base, *extra)
    assert code == 2 and message in err, err


def test_a_run_whose_draw_changed_is_not_resumed_on_other_questions(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    """A resumed sample is drawn again and must be the stored one (a changed exam or a changed way of
    drawing would otherwise ask other questions under the same run): the spec holds the draw's digest."""
    base = run_args(store_path)
    assert kaoshi(capsys, *base, "--sample", "20", "--seed", "3")[0] == 0
    with sqlite3.connect(store_path) as db:
        spec = json.loads(db.execute("SELECT spec FROM runs WHERE name = ?", (SAMPLED,)).fetchone()[0])
        spec["sample"]["drawn"] = "sha256:" + "0" * 64
        db.execute("UPDATE runs SET spec = ? WHERE name = ?", (json.dumps(spec, ensure_ascii=False), SAMPLED))
        db.execute(
            "DELETE FROM samples WHERE run = ? AND rowid IN (SELECT MAX(rowid) FROM samples)", (SAMPLED,)
        )
    code, _, err = kaoshi(capsys, *base, "--sample", "20", "--seed", "3")
    assert code == 2 and "already exists with a different spec (sample: stored" in err, err
