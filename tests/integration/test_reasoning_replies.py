"""A reasoning model over an OpenAI-compatible server (issue 41): its reasoning is kept apart and never
read for the answer, and a reply cut off while still reasoning is a wrong answer counted cut off, not an
error left out of the accuracy. Before, 6 cut-offs among 30 questions made a model that answered 16 of 27
objective questions right report 72.7% (16 of 22) instead of 59.3% (16 of 27)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.cli.main import main
from tests.support.fake_openai import FakeOpenAI
from tests.support.files import write_jsonl

LETTERS = "ABCD"


def exam_file(path: Path) -> Path:
    rows: list[object] = [{"exam": {"name": "reasoning"}}]
    for i in range(30):
        rows.append(
            {"id": f"q{i}", "type": "single", "question": f"第{i}题：甲乙丙丁哪一个对（）。",
             "answer": LETTERS[i % 4], "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}}
        )  # fmt: skip
    return write_jsonl(path, rows)


def server_for() -> FakeOpenAI:
    """Questions 0-5 cut off while reasoning; 6-21 answered right, 22-29 wrong; every answer's reasoning
    names another letter (a decoy a reader of the reasoning would take)."""
    answers, faults = {}, {}
    for i in range(30):
        stem = f"第{i}题："
        right = LETTERS[i % 4]
        answer = right if i < 22 else LETTERS[(i + 1) % 4]
        answers[stem] = f"答案：{answer}"
        faults[stem] = ["reasoning"] if i < 6 else ["reasoning:decoy"]
    return FakeOpenAI(answers=answers, faults=faults)


def test_cut_off_reasoning_is_graded_wrong_and_the_reasoning_is_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    with server_for() as server:
        result = kaoshi.evaluate(
            exam, model="openai:r1", base_url=server.base_url, store=tmp_path / "s.sqlite"
        )
    samples = {s.question_id: s for s in result.samples}
    assert result.errors == 0
    overall = result.summary.overall
    assert (overall.correct, overall.graded, overall.truncated) == (16, 30, 6)
    assert result.accuracy == pytest.approx(16 / 30)
    for i in range(6):
        cut = samples[f"q{i}"]
        assert (cut.correct, cut.truncated, cut.response, cut.status) == (False, True, "", "unparsed")
        assert cut.reasoning == "首先分析题干……" * 50
    for i in range(6, 30):
        answered = samples[f"q{i}"]
        assert answered.reasoning == "选项C看似正确，答案是C？再想想，应选A。"
        assert (
            answered.correct is (i < 22)
            and answered.response is not None
            and "答案是C" not in answered.response
        )
    with server_for() as server:
        code = main(
            ["run", "--benchmark", "kaoshi", "--data", str(tmp_path / "exam.jsonl"), "--model", "openai:r1",
             "--base-url", server.base_url, "--store", str(tmp_path / "cli.sqlite"), "--no-report"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0 and "30 new, 0 already stored, 0 error(s)" in err
    assert "warning: 6 of 30 answers were cut off at the token budget (graded wrong)" in err
