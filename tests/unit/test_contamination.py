"""The contamination check: McNemar's exact test by hand, mapping answers back, and end to end with a
scripted model that memorised answer positions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kaoshi.analysis.contamination import map_back, mcnemar_exact
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.data.model import Question, QuestionType
from kaoshi.data.shuffle import shuffle_exam
from tests.support.files import write_jsonl
from tests.support.runs import mock_script

EXAM = load_exam_result("sample").exam
OBJECTIVE = [q for q in EXAM.questions if q.type is not QuestionType.OPEN]


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (0, 0, 1.0),
        (3, 0, 0.25),  # 2 * (1/2)^3
        (10, 2, 2 * (1 + 12 + 66) / 4096),  # 2 * P(X <= 2), X ~ Bin(12, 1/2)
        (2, 10, 2 * (1 + 12 + 66) / 4096),  # symmetric
        (5, 5, 1.0),  # capped
        (6, 0, 2 / 64),
    ],
)
def test_mcnemar_exact_by_hand(b: int, c: int, expected: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_mcnemar_is_the_exact_sum_of_binomial_coefficients_at_every_small_count() -> None:
    """The same float as summing math.comb (what it computed before, in time growing as n squared)."""
    for b in range(70):
        for c in range(70):
            n, k = b + c, min(b, c)
            reference = (
                1.0 if n == 0 else min(1.0, 2 * (sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)))
            )
            assert mcnemar_exact(b, c) == reference, (b, c)
    assert 0 < mcnemar_exact(45_000, 55_000) < 1e-200  # 100,000 discordant pairs, as two big runs have


def test_mcnemar_matches_scipy_binomtest() -> None:
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(7, 3), (20, 9), (1, 0), (40, 35), (2_480, 2_520), (49_700, 50_300), (45_000, 55_000)]:
        assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_answers_of_a_file_shuffled_elsewhere_map_back_by_option_text() -> None:
    original = Question(
        "q", QuestionType.MULTI, "？", (("A", "甲"), ("B", "乙"), ("C", "丙")), frozenset("AC")
    )
    elsewhere = Question(
        "q", QuestionType.MULTI, "？", (("A", "丙"), ("B", "甲 "), ("C", "乙")), frozenset("AB")
    )
    assert map_back(elsewhere, original, frozenset("AB")) == frozenset("AC")
    assert map_back(elsewhere, original, frozenset("C")) == frozenset("B")
    edited = Question("q", QuestionType.MULTI, "？", (("A", "丙"), ("B", "丁"), ("C", "乙")), frozenset("A"))
    assert map_back(edited, original, frozenset("A")) is None  # texts do not match one to one


def run(store: str, name: str, script: Path, *extra: str) -> None:
    code = main(["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", name,
                 "--store", store, *extra])  # fmt: skip
    assert code == 0


def test_a_position_memoriser_is_caught(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = str(tmp_path / "store.sqlite")
    # The mock answers by question id, so in the shuffled run it repeats the letters it "memorised".
    memoriser = mock_script(tmp_path / "memoriser.jsonl", {q.id for q in OBJECTIVE})
    run(store, "orig", memoriser)
    run(store, "shuf", memoriser, "--shuffle-options", "11")
    shuffled = {q.id: q for q in shuffle_exam(EXAM, 11).questions}
    moved = [q for q in OBJECTIVE if q.type.is_choice and shuffled[q.id].answer != q.answer]
    capsys.readouterr()

    assert main(["contamination", "orig", "shuf", "--format", "json", "--store", store]) == 0
    report = json.loads(capsys.readouterr().out)
    overall = report["overall"]
    assert overall["n"] == len(OBJECTIVE) and overall["original_accuracy"] == 1.0
    assert overall["only_original"] == len(moved) and overall["only_shuffled"] == 0
    assert overall["old_position"] == len(moved)  # each wrong answer is the gold's old letters
    assert overall["drop"] == pytest.approx(len(moved) / len(OBJECTIVE))
    assert overall["mcnemar_p"] == pytest.approx(mcnemar_exact(len(moved), 0))
    assert overall["mcnemar_p"] < 1e-4
    by_type = {row["group"]: row for row in report["groups"]["type"]}
    assert by_type["judge"]["drop"] == 0 and by_type["judge"]["mcnemar_p"] == 1.0
    assert {c["id"] for c in report["candidates"]} == {q.id for q in moved}
    candidate = report["candidates"][0]
    assert candidate["shown"] == candidate["gold"] and candidate["shuffled"] != candidate["gold"]

    assert main(["contamination", "orig", "shuf", "--list", "--store", store]) == 0
    out = capsys.readouterr().out
    assert f"{len(moved)} question(s) right only in the original order" in out and moved[0].id in out

    # A model that knows the material answers the shuffled options by content: no drop at all.
    def by_content(q: Question) -> str:
        if isinstance(q.answer, frozenset):
            return "".join(sorted(q.answer))
        return "正确" if q.answer else "错误"

    rows = [{"id": q.id, "response": f"答案：{by_content(q)}"} for q in shuffled.values()]
    knower = write_jsonl(tmp_path / "knower.jsonl", rows)
    run(store, "knower-orig", memoriser)
    run(store, "knower-shuf", knower, "--shuffle-options", "11")
    capsys.readouterr()
    assert main(["contamination", "knower-orig", "knower-shuf", "--format", "json", "--store", store]) == 0
    overall = json.loads(capsys.readouterr().out)["overall"]
    assert overall["drop"] == 0 and overall["only_original"] == 0 and overall["mcnemar_p"] == 1.0
