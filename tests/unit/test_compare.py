"""kaoshi compare: runs on the same questions against a baseline, by group, with paired bootstraps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.report.paired import paired_rows
from kaoshi.store import Store

EXAM = load_exam_result("sample").exam


def test_compare_weak_and_strong_by_domain_and_type(
    capsys: pytest.CaptureFixture[str], two_runs: Path
) -> None:
    store = str(two_runs)
    code = main(["compare", "strong", "weak", "--baseline", "weak", "--format", "json", "--store", store])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "strong vs weak:" in captured.err and "model" in captured.err
    document = json.loads(captured.out)
    assert document["baseline"] == "weak" and document["runs"] == ["weak", "strong"]
    (overall,) = document["groups"]["all"]
    assert overall["n"] == 40  # open questions are not graded, so not paired
    assert overall["accuracy"] == {"weak": 0.25, "strong": 1.0}
    delta = overall["differences"]["strong"]
    assert delta["difference"] == pytest.approx(0.75) and delta["low"] > 0.5 and delta["p_value"] < 0.001
    by_type = {row["group"]: row for row in document["groups"]["type"]}
    objective = [q for q in EXAM.questions if q.type.value != "open"]
    for qtype, row in by_type.items():
        members = [q for q in objective if q.type.value == qtype]
        right = sum(q in objective[:10] for q in members)  # weak is right on the first 10
        assert row["n"] == len(members) and row["accuracy"]["weak"] == pytest.approx(right / len(members))
    assert main(["compare", "weak", "strong", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "Δ strong vs weak [95% CI]" in out and "+75.0 [" in out and "by domain" in out


def test_only_questions_every_run_graded_are_paired(two_runs: Path) -> None:
    with Store(two_runs) as store:
        strong, weak = store.samples("strong"), store.samples("weak")
    (row,) = paired_rows([strong, weak[:12]], None, resamples=200)
    graded_in_first_12 = sum(1 for s in weak[:12] if s.correct is not None)
    assert row.n == graded_in_first_12 and row.accuracy[0] == 1.0


def test_compare_refuses_a_single_run(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    assert main(["compare", "strong", "--store", str(two_runs)]) == 2
    assert "at least two runs" in capsys.readouterr().err


def test_a_study_from_key_rows_is_the_study_from_score_rows(tmp_path: Path) -> None:
    """What `kaoshi compare` counts before its bootstraps, the other runs read as key rows (their outcomes
    and coverage, paired at C speed), is what it counts from every run's score rows: with errors, an id
    holding another question, a judge's grades and every grouping, each run the baseline in turn; and on
    each benchmark's golden runs written again by this kaoshi."""
    from kaoshi.api import studies
    from tests.support.mixed_runs import GOLDEN_FILE, rewrite, three_runs

    three = tmp_path / "three.sqlite"
    three_runs(three, errors=("q/8", "q/13"))
    rewritten = tmp_path / "rewritten.sqlite"
    rewrite(GOLDEN_FILE, rewritten)
    keys = [None, *studies.COMPARE_KEYS]
    compared = 0
    for path in (three, rewritten):
        with Store(path, read_only=True) as store:
            by_benchmark: dict[str, list[str]] = {}
            for record in store.runs():
                if record.spec.repeats == 1:
                    by_benchmark.setdefault(record.spec.benchmark, []).append(record.name)
            for names in (names for names in by_benchmark.values() if len(names) > 1):
                for first in range(len(names)):
                    records = [store.get_run(name) for name in [*names[first:], *names[:first]]]
                    samples = [store.score_rows(record.name, text_end=0) for record in records]
                    expected = studies._scored_study(records, samples, keys)
                    assert studies._paired_study(store, records, keys) == expected, names
                    compared += 1
    assert compared >= 5
