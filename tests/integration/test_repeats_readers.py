"""What reads a run of k samples a question besides the report (issue 41 review): a re-score with an LLM
extractor keeps every sample, a vote is one answer a question, and the numbers averaged over samples
never mix judged and unjudged open answers."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import kaoshi
from kaoshi.cli.main import main
from tests.support.files import single_choice_exam, write_jsonl
from tests.support.runs import SAMPLE_OPEN, judge_script, mock_script

LETTERS = "ABCD"


def exam_file(path: Path) -> Path:
    return single_choice_exam(path, 3, "k")


def test_a_rescore_with_an_extractor_keeps_every_sample(tmp_path: Path) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    unread = write_jsonl(
        tmp_path / "model.jsonl", [{"id": f"q{i}", "response": "我想想……"} for i in range(3)]
    )
    reader = write_jsonl(
        tmp_path / "extractor.jsonl", [{"id": f"q{i}", "response": LETTERS[i % 4]} for i in range(3)]
    )
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate(exam, model=f"mock:{unread}", store=store, run_name="k", repeats=3)
    kaoshi.rescore("k", "k2", store=store, llm_extractor=f"mock:{reader}")
    with kaoshi.store.Store(store, read_only=True) as opened:
        rescored = opened.all_samples("k2")
    assert sorted((s.question_id, s.sample) for s in rescored) == [
        (f"q{i}", k) for i in range(3) for k in range(3)
    ]
    assert {(s.extracted_by, s.correct) for s in rescored} == {("llm", True)}
    assert kaoshi.summarize("k2", store=store).repeats.avg_at_k == 1.0


def test_a_vote_of_a_k_sample_run_is_one_answer_a_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    right = write_jsonl(
        tmp_path / "m.jsonl", [{"id": f"q{i}", "response": f"答案：{LETTERS[i % 4]}"} for i in range(3)]
    )
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate(exam, model=f"mock:{right}", store=store, run_name="a", repeats=3, temperature=0.7)
    kaoshi.evaluate(exam, model=f"mock:{right}", store=store, run_name="b")
    assert main(["vote", "a", "b", "--run-name", "v", "--store", str(store)]) == 0
    capsys.readouterr()
    assert main(["report", "v", "--store", str(store), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "k" not in report and report["spec"]["method"] == "vote"
    assert not {"temperature", "repeats"} & set(report["spec"])


def test_numbers_averaged_over_samples_never_mix_judged_and_unjudged_open_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objective = {q.id for q in kaoshi.load_exam("sample").questions if q.type.value != "open"}
    script = mock_script(tmp_path / "m.jsonl", objective)  # right everywhere
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model=f"mock:{script}", store=store, run_name="k", repeats=3)
    judge = judge_script(tmp_path / "judge.jsonl", dict.fromkeys(SAMPLE_OPEN, 10))
    assert main(["judge", "k", "--judge", f"mock:{judge}", "--store", str(store)]) == 0
    summary = kaoshi.summarize("k", store=store)
    assert summary.repeats is not None and summary.overall.points == summary.overall.max_points
    means = summary.repeats.means
    assert means["accuracy"] == 1.0
    assert not [name for name in means if "points" in name or name.startswith("metric.")]
    capsys.readouterr()
    assert main(["leaderboard", "--store", str(store), "--format", "json"]) == 0
    (board,) = json.loads(capsys.readouterr().out)
    shown = dict(zip(board["columns"], board["rows"][0], strict=True))
    first = kaoshi.leaderboard(store=store)[0].entries[0]
    assert first.more_samples == ()  # the judged first sample stands for the run's points
    assert shown["run"] == "k"


def test_reuse_takes_no_answer_that_used_its_whole_budget_and_reads_the_others_again(tmp_path: Path) -> None:
    """Runs of the local backends before they marked cut-offs stored them unmarked: an answer as long as
    its budget is asked again; the others are extracted and graded again under today's rules."""
    exam = kaoshi.load_exam("kaoshi", exam_file(tmp_path / "exam.jsonl"))
    right = write_jsonl(
        tmp_path / "m.jsonl", [{"id": f"q{i}", "response": f"答案：{LETTERS[i % 4]}"} for i in range(3)]
    )
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate(exam, model=f"mock:{right}", store=store, run_name="old", max_new_tokens=50)
    with sqlite3.connect(store) as db:  # as an old hf run stored them: one at its budget, one misgraded
        db.execute("UPDATE samples SET tokens_out = 50 WHERE question_id = 'q1'")
        db.execute("UPDATE samples SET correct = 0, score = 0 WHERE question_id = 'q2'")
    result = kaoshi.evaluate(
        exam, model=f"mock:{right}", store=store, run_name="new", max_new_tokens=500, reuse_from="old"
    )
    assert (result.new_samples, result.reused) == (1, 2)
    assert [s.correct for s in result.samples] == [True, True, True]
