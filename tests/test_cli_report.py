"""End-to-end tests of the reporting commands: multi-run report, leaderboard, export, plot, html."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kaoshi.cli.main import main


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
