"""kaoshi.judge / compare / contamination / vote give what their commands print, as typed values, and the
plots read runs with their grades as the reports do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import kaoshi
import kaoshi.benchmarks
from kaoshi.cli.main import main
from kaoshi.store import Store


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_is_the_command_as_values(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    notes: list[str] = []
    result = kaoshi.compare(
        ["weak", "strong"], store=two_runs, by=["domain"], resamples=500, notify=notes.append
    )
    printed = cli_json(
        capsys, "compare", "weak", "strong", "--by", "domain", "--resamples", "500", "--format", "json",
        "--store", str(two_runs),
    )  # fmt: skip
    assert result.to_json() == printed
    (overall,) = result.groups["all"]
    assert (overall.n, overall.accuracy) == (40, [0.25, 1.0])
    assert overall.differences[0].difference == pytest.approx(0.75)
    assert result.differences["strong"][0][0] == "model" and notes == []
    with pytest.raises(ValueError, match="at least two runs"):
        kaoshi.compare(["weak"], store=two_runs)
    with pytest.raises(ValueError, match="cannot group by 'colour'"):
        kaoshi.compare(["weak", "strong"], store=two_runs, by=["colour"])


def test_contamination_is_the_command_as_values(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model="constant:A", store=store, run_name="original")
    kaoshi.evaluate("sample", model="constant:A", shuffle_options=5, store=store, run_name="shuffled")
    notes: list[str] = []
    result = kaoshi.contamination("original", "shuffled", store=store, notify=notes.append)
    printed = cli_json(
        capsys, "contamination", "original", "shuffled", "--format", "json", "--store", str(store)
    )
    assert result.to_json() == printed
    assert result.runs_in_order and result.shuffle_seeds == (None, 5) and notes == []
    # Always answering A is position bias: right where the gold was A, wrong once the options move.
    assert result.overall.only_original == len(result.candidates) > 0
    assert all(p.old_position for p in result.candidates)
    kaoshi.contamination("shuffled", "original", store=store, notify=notes.append)
    assert notes and "should be the shuffled run" in notes[0]


def test_vote_is_the_command_as_values(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    # a second run of the weak mock model (its script is beside the store)
    kaoshi.evaluate("sample", model=f"mock:{tmp_path / 'weak.jsonl'}", store=two_runs, run_name="weak2")
    copy = tmp_path / "copy.sqlite"
    shutil.copy(two_runs, copy)
    result = kaoshi.vote(["weak", "strong", "weak2"], store=two_runs, run_name="v")
    printed = cli_json(
        capsys, "vote", "weak", "strong", "weak2", "--run-name", "v", "--format", "json", "--store", str(copy)
    )
    assert result.best == "strong" and result.outcome.questions == 40
    # The vote of weak, strong, weak2 follows the two weak runs.
    assert [s.run for s in result.compared.summaries] == ["strong", "weak", "weak2", "v"]
    assert result.compared.summaries[-1].overall.accuracy == pytest.approx(0.25)
    with Store(copy) as one, Store(two_runs) as other:
        assert [s.answer for s in one.samples("v")] == [s.answer for s in other.samples("v")]
    assert [r["run"] for r in printed["runs"]] == ["strong", "weak", "weak2", "v"]
    with pytest.raises(ValueError, match="for --method weighted"):
        kaoshi.vote(["weak", "strong"], store=two_runs, in_sample=True)


def test_judge_takes_a_callable_and_its_grades_reach_summarize_and_the_plot(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    asked: list[str] = []

    def strict_judge(prompt: str) -> str:
        asked.append(prompt)
        return "评分：7"

    before = kaoshi.summarize("strong", store=two_runs)
    outcome = kaoshi.judge("strong", strict_judge, store=two_runs)
    assert (outcome.graded, outcome.asked, outcome.already, len(asked)) == (4, 4, 0, 4)
    assert outcome.grader.startswith("careful:function:tests.integration.test_api_studies.")
    after = kaoshi.summarize("strong", store=two_runs)
    assert before.grader is None and after.grader == outcome.grader
    assert before.parts["subjective"].scored == 0 and after.parts["subjective"].scored == 4
    assert after.parts["subjective"].points_rate == pytest.approx(0.7)
    assert after.to_json() == cli_json(
        capsys, "report", "strong", "--format", "json", "--store", str(two_runs)
    )
    # Judging again asks nothing and loads nothing.
    again = kaoshi.judge("strong", strict_judge, store=two_runs)
    assert (again.asked, again.already, len(asked)) == (0, 4, 4)
    with pytest.raises(ValueError, match="--second-judge is for --mode debate"):
        kaoshi.judge("strong", strict_judge, second_judge=strict_judge, store=two_runs)


def test_rescore_is_the_command_as_values(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy.sqlite"
    shutil.copy(two_runs, copy)
    outcome = kaoshi.rescore("weak", "weak-partial", store=two_runs, multi_policy="partial")
    capsys.readouterr()
    assert (
        main(
            [
                "rescore",
                "weak",
                "--run-name",
                "weak-partial",
                "--multi-policy",
                "partial",
                "--store",
                str(copy),
            ]
        )
        == 0
    )
    shown = capsys.readouterr()
    assert "rescored 'weak' into 'weak-partial'" in shown.err
    # the new run's report, as `kaoshi report` shows it: with its benchmark's own numbers (the F1s)
    assert kaoshi.load_run("weak", store=two_runs).run.spec.benchmark == "sample"
    assert "F1 (QualBench: 2PR/(P+R), weighted P and R)" in shown.out
    assert "weighted F1 (scikit-learn average=weighted)" in shown.out
    ours, theirs = (
        kaoshi.load_run("weak-partial", store=two_runs),
        kaoshi.load_run("weak-partial", store=copy),
    )
    assert ours.samples == theirs.samples and ours.run.spec == theirs.run.spec
    assert ours.run.spec.multi_policy == "partial" and ours.run.spec.rescored_from == "weak"
    assert outcome.samples == 44 and outcome.changed > 0  # a wrong subset now earns part of the points
    with pytest.raises(ValueError, match="--partial-credit"):
        kaoshi.rescore("weak", "w2", store=two_runs, partial_credit=3)


def test_runs_render_prompt_and_agreement_are_their_commands_as_values(
    capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    listed = kaoshi.runs(store=two_runs)
    assert [info.run.name for info in listed] == ["strong", "weak"]
    assert [info.accuracy for info in listed] == [1.0, 0.25]
    assert [info.to_json() for info in listed] == cli_json(
        capsys, "runs", "--format", "json", "--store", str(two_runs)
    )

    exam = kaoshi.load_exam("sample")
    question = exam.questions[3].id
    shown = kaoshi.render_prompt(exam, question, shots=2, chat=True, system="你是考生。")
    assert shown.chat and shown.prompt.shots == 2 and shown.template == "lhmke"
    assert shown.prompt.payload() == cli_json(
        capsys, "prompt", "show", "--benchmark", "sample", "--question", question, "--shots", "2", "--chat",
        "--system", "你是考生。", "--format", "json",
    )  # fmt: skip

    kaoshi.judge("strong", lambda prompt: "评分：6", store=two_runs)
    open_ids = [s.question_id for s in kaoshi.load_run("strong", store=two_runs).samples if s.qtype == "open"]
    human = tmp_path / "human.csv"
    human.write_text(
        "question_id,scorer,score\n"
        + "".join(f"{q},h1,{s}\n" for q, s in zip(open_ids, [5, 6, 8, 1], strict=True)),
        encoding="utf-8",
    )
    report = kaoshi.agreement("strong", human, store=two_runs)
    assert report.to_json() == cli_json(
        capsys, "agreement", "strong", "--human", str(human), "--format", "json", "--store", str(two_runs)
    )
    assert len(open_ids) == 4 and any(row.grader.startswith("careful:function:") for row in report.rows)


def test_leaderboard_is_the_command_as_values(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    from kaoshi.report.leaderboard import leaderboard_table

    [board] = kaoshi.leaderboard(store=two_runs)
    assert board.benchmark == "sample" and [e.run.name for e in board.entries] == ["strong", "weak"]
    printed = cli_json(capsys, "leaderboard", "--format", "json", "--store", str(two_runs))
    assert [board.to_json(leaderboard_table(board))] == printed
    with pytest.raises(ValueError, match="no runs on benchmark 'ceval'"):
        kaoshi.leaderboard(store=two_runs, benchmark="ceval")


def test_the_benchmarks_kaoshi_can_load_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    listed = kaoshi.list_benchmarks()
    assert [b.name for b in listed] == list(kaoshi.benchmarks.BENCHMARKS)  # kaoshi's own, in registry order
    ceval = next(b for b in listed if b.name == "ceval")
    assert (ceval.default_prompt, ceval.hub_id, ceval.detected, ceval.exporters) == (
        "ceval-answer-only",
        "ceval/ceval-exam",
        True,
        ("ceval-submission",),
    )
    assert ceval.subjects == 52
    assert cli_json(capsys, "benchmarks", "--format", "json") == [b.to_json() for b in listed]
    capsys.readouterr()
    assert main(["benchmarks"]) == 0
    assert "ceval-submission" in capsys.readouterr().out
