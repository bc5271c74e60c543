"""Runs for tests: mock-model and mock-judge scripts, run specs, and the command line called in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.data.model import Exam
from kaoshi.store import RunSpec
from tests.support.files import write_jsonl


def mock_script(path: Path, right: set[str]) -> Path:
    """A mock model for the sample exam, right on the questions in `right` and wrong elsewhere."""
    rows = []
    for q in load_exam_result("sample").exam.questions:
        if q.type.value == "open":
            rows.append({"id": q.id, "response": "参考回答"})
        elif q.type.value == "judge":
            good = q.answer if q.id in right else not q.answer
            rows.append({"id": q.id, "response": f"答案：{'正确' if good else '错误'}"})
        else:
            gold = "".join(sorted(q.answer))  # type: ignore[arg-type]
            # a letter outside the gold set, or (all options right) a strict subset
            wrong = next((letter for letter in q.letters if letter not in gold), gold[:-1])
            rows.append({"id": q.id, "response": f"答案：{gold if q.id in right else wrong}"})
    return write_jsonl(path, rows)


def exam_spec(exam: Exam, model: str, method: str = "generate", **overrides: Any) -> RunSpec:
    """The run spec of a test run over `exam`: defaults for every field the test does not set."""
    values: dict[str, Any] = {
        "benchmark": "kaoshi",
        "data": None,
        "split": None,
        "fingerprint": exam.fingerprint,
        "n_questions": len(exam),
        "prompt": "default",
        "prompt_version": 1,
        "shots": 0,
        "model": model,
        "method": method,
        "seed": 0,
        "limit": None,
        "max_new_tokens": 64,
        **overrides,
    }
    return RunSpec(**values)


# -- judging the sample exam's open questions ---------------------------------------------------------------
SAMPLE_OPEN = {q.id: q for q in load_exam_result("sample").exam.questions if q.type.value == "open"}


def judge_script(path: Path, scores: dict[str, object], suffix: str = "") -> Path:
    rows = [
        {"id": qid + suffix, "response": f"理由：与标准答案对照后给分。\n答案1得分：10\n答案2得分：{score}"}
        for qid, score in scores.items()
    ]
    return write_jsonl(path, rows)


# -- the command line, in-process ---------------------------------------------------------------------------
def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    out: str = capsys.readouterr().out
    return out


def cli_report(capsys: pytest.CaptureFixture[str], store: Path, name: str) -> dict[str, Any]:
    out = cli(capsys, "report", name, "--format", "json", "--store", str(store))
    report: dict[str, Any] = json.loads(out)
    return report
