"""Every benchmark's own published files load whole with the default options: the official count, no
refused row, and each quirk of the data as one warning naming where it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from tests.realdata.conftest import repository

# (benchmark, repository, path inside it, split, official count, warnings expected: a pattern each)
PUBLISHED = [
    ("cmmlu", "CMMLU", "", "test", 11_582, []),
    ("cmmlu", "CMMLU", "", "dev", 335, []),
    ("agieval", "AGIEval", "", None, 4_723, None),
    ("gaokao-bench", "GAOKAO-Bench", "", None, 2_811, None),
    ("logiqa", "LogiQA-dataset", "zh_eval.txt", None, 651, []),
    (
        "logiqa",
        "LogiQA-dataset",
        "zh_test.txt",
        None,
        651,
        [r"^19 row\(s\) list their options out of letter order .*zh_test\.txt:865, .*zh_test\.txt:913, "],
    ),
    ("cflue", "cflue", "", None, 3_864, []),
    ("m3ke", "M3KE", "", "dev", 355, []),
    (
        "m3ke",
        "M3KE",
        "",
        "test",
        20_122,
        [
            r"^3 row\(s\) have an empty option .*College\.jsonl:239, .*:290, .*:294$",
            r"labels are withheld: 20122 question",
        ],
    ),
    ("fineval", "FinEval-v1", "", "val", 3_340, []),
]


def _path(repo: str, inside: str) -> Path:
    root = repository(repo)
    return root / inside if inside else root


@pytest.mark.parametrize(
    ("benchmark", "repo", "inside", "split", "count", "warnings"),
    PUBLISHED,
    ids=[f"{b}-{s or i or 'default'}" for b, _, i, s, _, _ in PUBLISHED],
)
def test_published_files_load_whole_with_the_default_options(
    benchmark: str, repo: str, inside: str, split: str | None, count: int, warnings: list[str] | None
) -> None:
    result = load_exam_result(
        benchmark, _path(repo, inside), split
    )  # on_invalid="fail": a refused row raises
    assert len(result.exam.questions) == count
    assert result.errors == ()
    if warnings is not None:  # None: the benchmark's own test module checks its warnings
        assert len(result.warnings) == len(warnings), result.warnings
        for pattern, warning in zip(warnings, result.warnings, strict=True):
            assert re.search(pattern, warning), warning


@pytest.mark.parametrize(
    ("repo", "inside", "split", "count"),
    [("LogiQA-dataset", "zh_test.txt", None, 651), ("M3KE", "", "test", 20_122)],
)
def test_kaoshi_validate_exits_0_on_the_published_files(
    capsys: pytest.CaptureFixture[str], repo: str, inside: str, split: str | None, count: int
) -> None:
    args = ["validate", str(_path(repo, inside))] + (["--split", split] if split else [])
    assert main(args) == 0
    out = capsys.readouterr()
    assert out.out.startswith(f"ok: {_path(repo, inside)}: {count} question(s)")
    assert "warning: " in out.err


def test_a_run_on_the_published_logiqa_test_file_answers_every_question(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _path("LogiQA-dataset", "zh_test.txt")
    store = str(tmp_path / "runs.sqlite")
    assert (
        main(["run", "--data", str(data), "--model", "constant:A", "--store", store, "--run-name", "a"]) == 0
    )
    assert main(["report", "a", "--format", "json", "--store", store]) == 0
    assert '"n": 651' in capsys.readouterr().out.replace('"n_questions"', "")
