"""End-to-end tests of the reporting commands: multi-run report, leaderboard, export, plot, html."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.store import Store


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


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


@pytest.fixture
def with_half_errored(capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path) -> Path:
    """two_runs plus 'half': right on every question it answered, but half the questions (every second
    one) ended in an error (the mock has no reply for them)."""
    from tests.support.runs import mock_script

    objective = [q.id for q in load_exam_result("sample").exam.questions if q.type.value != "open"]
    script = mock_script(tmp_path / "all-right.jsonl", set(objective))
    lines = script.read_text(encoding="utf-8").splitlines()
    half = tmp_path / "half.jsonl"
    half.write_text("\n".join(lines[::2]) + "\n", encoding="utf-8")
    code, _, err = kaoshi(
        capsys, "run", "--benchmark", "sample", "--model", f"mock:{half}", "--run-name", "half",
        "--store", str(two_runs),
    )  # fmt: skip
    assert code == 0, err
    return two_runs


def common_with_half(store: Path) -> tuple[list[str], float]:
    """The objective questions 'half' answered, and 'weak''s accuracy on them."""
    with Store(store) as opened:
        half = {
            s.question_id for s in opened.samples("half") if s.status != "error" and s.correct is not None
        }
        weak = [s for s in opened.samples("weak") if s.question_id in half]
    return sorted(half), sum(bool(s.correct) for s in weak) / len(weak)


def test_leaderboard_shows_a_half_errored_run_as_incomplete_and_ranks_on_common_questions(
    capsys: pytest.CaptureFixture[str], with_half_errored: Path
) -> None:
    store = str(with_half_errored)
    common, weak_accuracy = common_with_half(with_half_errored)
    assert 15 <= len(common) <= 25
    code, out, err = kaoshi(capsys, "leaderboard", "--format", "md", "--store", store)
    assert code == 0, err
    assert f"compared on {len(common)} questions graded by all 3 runs" in out
    header, *lines = [line.strip("| ").split(" | ") for line in out.splitlines() if line.startswith("| ")]
    rows = {cells[0]: dict(zip(header, cells, strict=True)) for cells in lines}
    assert rows["half"]["questions"] == "22/44 incomplete: 22 errors"
    assert rows["strong"]["questions"] == "44/44"
    # every run's accuracy is over the same questions: weak's own 25% becomes its accuracy on them
    assert rows["weak"]["accuracy"] == f"{100 * weak_accuracy:.1f}%"
    assert rows["half"]["accuracy"] == rows["strong"]["accuracy"] == "**100.0%**"
    assert "incomplete: half" in out

    code, out, _ = kaoshi(capsys, "leaderboard", "--format", "json", "--store", store)
    (board,) = json.loads(out)
    assert board["compared_on"] == {"questions": len(common), "runs": 3, "common": True}
    coverage = {c["run"]: c for c in board["coverage"]}
    assert coverage["half"]["complete"] is False and coverage["half"]["errors"] == 22
    assert coverage["strong"]["complete"] is True and coverage["strong"]["answered"] == 44
    code, out, _ = kaoshi(capsys, "leaderboard", "--store", store)  # wide enough: nothing wraps or is cut
    assert re.search(r"│ half .*│ +22/44 incomplete: 22 errors │", out) and "…" not in out
    for fmt in ("csv", "latex"):
        code, out, _ = kaoshi(capsys, "leaderboard", "--format", fmt, "--store", store)
        assert code == 0 and "22/44 incomplete: 22 errors" in out and f"compared on {len(common)}" in out
    code, out, _ = kaoshi(capsys, "runs", "--format", "json", "--store", store)
    listed = {row["run"]: row for row in json.loads(out)}
    assert listed["half"]["done"] == "22/44 incomplete: 22 errors" and listed["half"]["complete"] is False
    assert listed["strong"]["done"] == "44/44" and listed["strong"]["errors"] == 0


def test_report_of_runs_shows_coverage_and_compares_on_questions_all_graded(
    capsys: pytest.CaptureFixture[str], with_half_errored: Path
) -> None:
    store = str(with_half_errored)
    common, weak_accuracy = common_with_half(with_half_errored)
    code, out, err = kaoshi(capsys, "report", "weak", "half", "--store", store)
    assert code == 0, err
    assert f"runs — compared on {len(common)} questions graded by both runs" in out
    assert re.search(r"│ half +│ +44 │ +22 │ +20 │ +22 │ +0 │ +incomplete: 22 errors │", out), out
    assert re.search(r"│ weak +│ +44 │ +44 │ +40 │ +0 │ +0 │ +complete │", out), out
    assert re.search(rf"│ half +│ +{len(common)} │", out), out  # the bootstrap pairs the common questions

    code, out, _ = kaoshi(capsys, "report", "weak", "half", "--format", "json", "--store", store)
    document = json.loads(out)
    assert document["compared_on"] == {"questions": len(common), "runs": 2, "common": True}
    assert [c["complete"] for c in document["coverage"]] == [True, False]
    runs = {r["run"]: r for r in document["runs"]}
    assert runs["weak"]["accuracy"] == pytest.approx(weak_accuracy) and runs["half"]["accuracy"] == 1.0
    assert document["comparisons"][0]["n"] == len(common)
    for fmt, marker in (("md", "| half | 44 | 22 | 20 | 22 | 0 | incomplete: 22 errors |"),
                        ("csv", "half,status,incomplete: 22 errors,0"),
                        ("latex", "half & 44 & 22 & 20 & 22 & 0 & incomplete: 22 errors")):  # fmt: skip
        code, out, _ = kaoshi(capsys, "report", "weak", "half", "--format", fmt, "--store", store)
        assert code == 0 and marker in out, out


def test_compare_and_vote_show_coverage(capsys: pytest.CaptureFixture[str], with_half_errored: Path) -> None:
    store = str(with_half_errored)
    common, _ = common_with_half(with_half_errored)
    code, out, err = kaoshi(capsys, "compare", "strong", "half", "weak", "--store", store)
    assert code == 0, err
    assert f"runs — compared on {len(common)} questions graded by all 3 runs" in out
    assert "incomplete: 22 errors" in out
    code, out, _ = kaoshi(capsys, "compare", "strong", "half", "--format", "json", "--store", store)
    document = json.loads(out)
    assert document["compared_on"]["questions"] == len(common)
    assert [c["complete"] for c in document["coverage"]] == [True, False]

    code, out, err = kaoshi(capsys, "vote", "strong", "half", "weak", "--format", "json", "--store", store)
    assert code == 0, err
    document = json.loads(out)
    coverage = {c["run"]: c for c in document["coverage"]}
    assert coverage["half"]["complete"] is False and coverage["vote-majority"]["complete"] is True
    assert document["compared_on"]["questions"] == len(common)  # the vote's questions 'half' answered
