"""Multiple-choice scoring policies on hand-computed cases, and re-scoring stored runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kaoshi
from kaoshi.cli.main import main
from kaoshi.data import Question, QuestionType
from kaoshi.qtypes import grade_answer
from kaoshi.scoring import multi_credit
from kaoshi.store import Store
from tests.support.files import write_jsonl
from tests.support.questions import SCORED_MULTI, SCORED_OPTIONS

# chosen, (correct, exact points, partial points, f1 points) — points are 2 x credit
CASES = [
    ("ABD", (True, 2.0, 2.0, 2.0)),
    ("AB", (False, 0.0, 1.0, 2 * 0.8)),  # P=1, R=2/3 -> F1=0.8
    ("A", (False, 0.0, 1.0, 2 * 0.5)),  # P=1, R=1/3 -> F1=0.5
    ("ABC", (False, 0.0, 0.0, 2 * (2 / 3))),  # a wrong option: partial 0; P=R=2/3 -> F1=2/3
    ("ABCDE", (False, 0.0, 0.0, 2 * 0.75)),  # P=3/5, R=1 -> F1=0.75
    ("CE", (False, 0.0, 0.0, 0.0)),
]


@pytest.mark.parametrize(("chosen", "expected"), CASES)
def test_multi_policies(chosen: str, expected: tuple[bool, float, float, float]) -> None:
    correct, exact, partial, f1 = expected
    answer = frozenset(chosen)
    assert grade_answer(SCORED_MULTI, answer, "exact") == pytest.approx(
        type(grade_answer(SCORED_MULTI, answer))(correct, exact)
    )
    assert grade_answer(SCORED_MULTI, answer, "partial").points == pytest.approx(partial)
    assert grade_answer(SCORED_MULTI, answer, "partial").correct is correct
    assert grade_answer(SCORED_MULTI, answer, "f1").points == pytest.approx(f1)


def test_partial_credit_fraction_and_other_types() -> None:
    assert grade_answer(SCORED_MULTI, frozenset("A"), "partial", partial_credit=0.25).points == 0.5
    assert multi_credit(frozenset(), frozenset("AB"), "partial", 0.5) == 0.0
    single = Question("s", QuestionType.SINGLE, "q", SCORED_OPTIONS, frozenset("B"), points=1.0)
    assert grade_answer(single, frozenset("B"), "partial").points == 1.0
    assert grade_answer(single, frozenset("A"), "f1").points == 0.0
    assert grade_answer(SCORED_MULTI, None, "f1").points == 0.0


def test_rescore_makes_a_new_run_without_model_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.sqlite")
    # s-safe-5 gold ABC, s-safe-6 gold ACD: answer a correct subset and a set with a wrong option
    script = write_jsonl(
        tmp_path / "mock.jsonl",
        [{"id": "s-safe-5", "response": "答案：AB"}, {"id": "s-safe-6", "response": "答案：ABCD"}],
    )
    assert (
        main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                f"mock:{script}",
                "--run-name",
                "orig",
                "--store",
                store,
            ]
        )
        == 0
    )
    script.unlink()  # proves the rescore asks no model
    assert (
        main(["rescore", "orig", "--run-name", "partial", "--multi-policy", "partial", "--store", store]) == 0
    )
    assert "no model calls" in capsys.readouterr().err
    assert main(["rescore", "orig", "--run-name", "partial", "--store", store]) == 2  # name taken

    def scores(run: str) -> dict[str, float | None]:
        capsys.readouterr()
        assert main(["samples", run, "--format", "jsonl", "--store", store]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        return {r["id"]: r["score"] for r in rows if r["id"] in ("s-safe-5", "s-safe-6")}

    assert scores("orig") == {"s-safe-5": 0.0, "s-safe-6": 0.0}
    assert scores("partial") == {"s-safe-5": 1.0, "s-safe-6": 0.0}  # 2 points x 0.5; a wrong option earns 0
    assert main(["runs", "--format", "json", "--store", store]) == 0
    runs = {r["run"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs["partial"]["samples"] == runs["orig"]["samples"] == 44
    assert main(["report", "partial", "--format", "json", "--store", store]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["points"] == 1.0 and report["correct"] == 0  # accuracy stays exact-match


def test_rescore_keeps_the_source_runs_policy_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.sqlite")
    # s-safe-5 gold ABC: a correct subset, worth 2 x 0.25 under the run's partial rule
    script = write_jsonl(tmp_path / "mock.jsonl", [{"id": "s-safe-5", "response": "答案：AB"}])
    run = ["run", "--benchmark", "sample", "--model", f"mock:{script}", "--store", store]
    assert main([*run, "--run-name", "orig", "--multi-policy", "partial", "--partial-credit", "0.25"]) == 0
    script.unlink()
    assert main(["rescore", "orig", "--run-name", "kept", "--store", store]) == 0
    assert main(["rescore", "orig", "--run-name", "exact", "--multi-policy", "exact", "--store", store]) == 0
    assert main(["rescore", "orig", "--run-name", "half", "--partial-credit", "0.5", "--store", store]) == 0
    capsys.readouterr()

    def policy_and_points(run: str) -> tuple[str, float, float | None]:
        with Store(store) as opened:
            spec = opened.get_run(run).spec
            points = {s.question_id: s.score for s in opened.samples(run)}["s-safe-5"]
        return spec.multi_policy, spec.partial_credit, points

    assert policy_and_points("orig") == ("partial", 0.25, 0.5)
    assert policy_and_points("kept") == ("partial", 0.25, 0.5)
    assert policy_and_points("exact") == ("exact", 0.25, 0.0)
    assert policy_and_points("half") == ("partial", 0.5, 1.0)

    kaoshi.rescore("orig", "api-kept", store=store)
    assert policy_and_points("api-kept") == ("partial", 0.25, 0.5)
    kaoshi.rescore("orig", "api-f1", store=store, multi_policy="f1")
    assert policy_and_points("api-f1") == ("f1", 0.25, 2 * 0.8)  # P=1, R=2/3


def test_run_records_the_policy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    assert (
        main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                "random",
                "--multi-policy",
                "f1",
                "--limit",
                "3",
                "--run-name",
                "f1",
                "--store",
                str(store),
            ]
        )
        == 0
    )
    with Store(store) as opened:
        spec = opened.get_run("f1").spec
    assert (spec.multi_policy, spec.partial_credit) == ("f1", 0.5)
    assert (
        main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                "random",
                "--partial-credit",
                "2",
                "--store",
                str(store),
            ]
        )
        == 2
    )


def test_rescore_keeps_llm_extracted_answers_and_can_swap_the_extractor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.sqlite")
    ids = ["s-safe-1", "s-safe-2", "s-safe-3"]  # golds C, A, B
    rambling = write_jsonl(tmp_path / "model.jsonl", [{"id": i, "response": "嗯，我想想看……"} for i in ids])
    reader = write_jsonl(tmp_path / "reader.jsonl", [{"id": "s-safe-1", "response": "C"}])
    base = ["--benchmark", "sample", "--model", f"mock:{rambling}", "--limit", "3", "--store", store]
    assert main(["run", *base, "--run-name", "llm", "--llm-extractor", f"mock:{reader}"]) == 0
    assert main(["run", *base, "--run-name", "plain"]) == 0
    reader.unlink()  # re-reading the stored extractor reply calls nothing

    def answers(run: str) -> dict[str, tuple[str, str | None, str]]:
        capsys.readouterr()
        assert main(["samples", run, "--format", "jsonl", "--store", store]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        return {r["id"]: (r["status"], r["answer"], r["extracted_by"]) for r in rows}

    assert main(["rescore", "llm", "--run-name", "again", "--multi-policy", "partial", "--store", store]) == 0
    assert answers("again")["s-safe-1"] == ("ok", "C", "llm")
    assert main(["rescore", "llm", "--run-name", "rules-only", "--no-llm-extractor", "--store", store]) == 0
    assert answers("rules-only")["s-safe-1"] == ("unparsed", None, "rules")

    new_reader = write_jsonl(tmp_path / "reader2.jsonl", [{"id": "s-safe-2", "response": "A"}])
    assert (
        main(
            [
                "rescore",
                "plain",
                "--run-name",
                "late",
                "--llm-extractor",
                f"mock:{new_reader}",
                "--store",
                store,
            ]
        )
        == 0
    )
    late = answers("late")
    assert late["s-safe-2"] == ("ok", "A", "llm") and late["s-safe-1"][0] == "unparsed"
    with pytest.raises(SystemExit):  # argparse: the two options exclude each other
        main(["rescore", "plain", "--run-name", "x", "--llm-extractor", "mock:/nope", "--no-llm-extractor"])
