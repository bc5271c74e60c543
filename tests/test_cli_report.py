"""End-to-end tests of the reporting commands: multi-run report, leaderboard, export, plot, html."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.data import load_exam
from tests.conftest import write_jsonl

EXAM = load_exam("sample").exam


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def mock_script(path: Path, right: set[str]) -> Path:
    """A mock model that is right on the questions in `right` and answers wrongly elsewhere."""
    rows = []
    for q in EXAM.questions:
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


@pytest.fixture
def two_runs(capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path) -> Path:
    objective = [q.id for q in EXAM.questions if q.type.value != "open"]
    strong = mock_script(tmp_path / "strong.jsonl", set(objective))  # right on all 40
    weak = mock_script(tmp_path / "weak.jsonl", set(objective[:10]))  # right on 10 of 40
    for name, script in (("strong", strong), ("weak", weak)):
        code, _, err = kaoshi(
            capsys, "run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", name,
            "--store", str(store_path),
        )  # fmt: skip
        assert code == 0, err
    return store_path


def test_report_compares_runs_with_best_marked_and_bootstrap(
    capsys: pytest.CaptureFixture[str], two_runs: Path
) -> None:
    code, out, err = kaoshi(capsys, "report", "weak", "strong", "--by", "type", "--store", str(two_runs))
    assert code == 0, err
    assert re.search(r"accuracy \(micro, over questions\) +│ +25\.0% │ 100\.0% \* │", out), out
    assert "difference in accuracy vs weak" in out
    assert re.search(r"│ strong +│ +40 │ +\+75\.0 │", out), out

    code, out, _ = kaoshi(capsys, "report", "weak", "strong", "--format", "json", "--store", str(two_runs))
    document = json.loads(out)
    assert [r["run"] for r in document["runs"]] == ["weak", "strong"]
    (comparison,) = document["comparisons"]
    assert comparison["n"] == 40 and comparison["difference"] == pytest.approx(0.75)
    assert comparison["p_value"] < 0.001 and 0.5 < comparison["low"] < 0.75 < comparison["high"] <= 0.9

    code, out, _ = kaoshi(
        capsys, "report", "weak", "strong", "--by", "domain", "--format", "latex", "--store", str(two_runs)
    )
    assert "\\begin{tabular}{lrr}" in out and "\\textbf{100.0\\%}" in out

    code, out, _ = kaoshi(capsys, "report", "weak", "strong", "--format", "md", "--store", str(two_runs))
    assert "| accuracy (micro, over questions) | 25.0% | **100.0%** |" in out


def test_report_groups_and_standard_scores(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    code, out, err = kaoshi(
        capsys, "report", "strong", "--by", "group", "--format", "md", "--store", str(two_runs)
    )
    assert code == 0, err
    assert "| 工程类 | 22 | 100.0% |" in out
    # the sample exam's header gives every subject a standard score of 100; open questions are unscored
    assert "| 安全生产 | 工程类 | 12/12 | 10/11 | 100 | 100.0 |" in out
    code, out, _ = kaoshi(
        capsys,
        "report",
        "strong",
        "--standard-score",
        "安全生产=150",
        "--format",
        "md",
        "--store",
        str(two_runs),
    )
    assert "| 安全生产 | 工程类 | 12/12 | 10/11 | 150 | 150.0 |" in out
    assert "| 工程类 | 2 | 250.0 | 250 |" in out


def test_report_rejects_bad_input(capsys: pytest.CaptureFixture[str], two_runs: Path) -> None:
    code, _, err = kaoshi(capsys, "report", "weak", "nope", "--store", str(two_runs))
    assert code == 2 and "nope" in err
    with pytest.raises(SystemExit):
        main(["report", "weak", "--standard-score", "安全生产", "--store", str(two_runs)])
    assert "SUBJECT=POSITIVE_NUMBER" in capsys.readouterr().err
