"""`kaoshi report` says what a run's outputs look like: the JSON report's `outputs` block per run, and the
line under the terminal report's tables, only where it says something."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from tests.support.files import write_jsonl
from tests.support.output_runs import DELAY, QUESTIONS, output_run


def report(capsys: pytest.CaptureFixture[str], store: Path, *args: str) -> str:
    capsys.readouterr()
    assert main(["report", *args, "--store", str(store)]) == 0
    return capsys.readouterr().out


def test_the_json_report_has_the_outputs_block(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = output_run(tmp_path / "s.sqlite", tmp_path / "script.jsonl")
    outputs = json.loads(report(capsys, store, "outputs", "--format", "json"))["outputs"]
    model_time = outputs.pop("model_time_s")
    mean_time = outputs.pop("model_time_mean_s")
    # 41 answers of 30 tokens, 2 cut off at 512: p90 is still 30 (41 of 43 answers are within it)
    assert outputs == {
        "samples": 44,
        "answers": 43,
        "errors": 1,
        "generated": 43,
        "tokens_out": {
            "n": 43,
            "mean": (41 * 30 + 2 * 512) / 43,
            "p50": 30,
            "p90": 30,
            "p99": 512,
            "max": 512,
        },
        "tokens_reasoning": {
            "n": 43,
            "mean": (41 * 20 + 2 * 502) / 43,
            "p50": 20,
            "p90": 20,
            "p99": 502,
            "max": 502,
        },
        "truncated": 2,
        "truncated_share": 2 / 43,
        "loops": 1,
        "loops_share": 1 / 43,
        "tokens_in_total": 43 * 200,
        "tokens_out_total": 41 * 30 + 2 * 512,
        "timed": 43,
    }
    assert model_time == pytest.approx(43 * DELAY) and mean_time == pytest.approx(DELAY)


def test_the_terminal_report_ends_with_the_outputs_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = output_run(tmp_path / "s.sqlite", tmp_path / "script.jsonl")
    line = (
        "outputs: 43 answers, 1 error left out · tokens out p50 30 / p90 30 / p99 512 / max 512 · reasoning "
        "tokens p50 20 / p90 20 / p99 502 / max 502 · cut off at the budget 2 (4.7%) · looping to the budget "
        "1 (2.3%) · tokens 8,600 in / 2,254 out · model time 0.43 s (0.01 s an answer)"
    )
    monkeypatch.setenv("COLUMNS", "400")
    assert report(capsys, store, "outputs").endswith(f"\n\n{line}\n")
    assert report(capsys, store, "outputs", "--format", "md").endswith(f"\n\n{line}\n")
    monkeypatch.setenv("COLUMNS", "100")  # a narrow terminal: broken between phrases
    assert report(capsys, store, "outputs").endswith(
        "\n\noutputs: 43 answers, 1 error left out · tokens out p50 30 / p90 30 / p99 512 / max 512\n"
        "  reasoning tokens p50 20 / p90 20 / p99 502 / max 502 · cut off at the budget 2 (4.7%)\n"
        "  looping to the budget 1 (2.3%) · tokens 8,600 in / 2,254 out\n"
        "  model time 0.43 s (0.01 s an answer)\n"
    )
    for fmt in ("csv", "latex"):  # tables only
        assert "outputs:" not in report(capsys, store, "outputs", "--format", fmt)


def test_nothing_is_said_where_nothing_is_known(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    """Scripted answers with no token counts, no time and nothing cut off: no line, and JSON says so."""
    assert "outputs:" not in report(capsys, two_runs, "strong")
    outputs = json.loads(report(capsys, two_runs, "strong", "--format", "json"))["outputs"]
    assert outputs["tokens_out"] is None and outputs["truncated"] == 0 and outputs["tokens_in_total"] is None


def test_a_loglik_run_says_nothing_about_output_tokens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rows = []
    for question in QUESTIONS:
        if question.type.value == "open":  # still generated under loglik
            rows.append({"id": question.id, "response": "参考回答", "delay": DELAY})
        else:
            scores = (
                {"正确": -0.1, "错误": -2.0} if question.type.value == "judge" else {"A": -0.1, "B": -2.0}
            )
            rows.append({"id": question.id, "logprobs": scores, "delay": DELAY})
    script = write_jsonl(tmp_path / "loglik.jsonl", rows)
    store = tmp_path / "s.sqlite"
    run = ["run", "--benchmark", "sample", "--method", "loglik", "--model", f"mock:{script}"]
    assert main([*run, "--run-name", "ll", "--store", str(store)]) == 0
    outputs = json.loads(report(capsys, store, "ll", "--format", "json"))["outputs"]
    assert (outputs["answers"], outputs["generated"], outputs["tokens_out"]) == (44, 4, None)
    line = report(capsys, store, "ll").rsplit("\n\n", 1)[1]
    assert line.startswith("outputs: 44 answers (4 generated) · model time 0.44 s"), line
    assert "tokens" not in line
