"""For the paid-model tests (the ledger, the cost cap, the cache): a small exam of single-choice questions
in two subjects, and the command line run in this process."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaoshi.cli.main import main
from tests.support.files import write_jsonl

LETTERS = "ABCD"


def paid_exam(path: Path, n: int) -> Path:
    """`n` questions "第i题：…", gold A, B, C, D in turn, in subjects 法学 and 会计 in turn (exam "paid")."""
    rows: list[object] = [{"exam": {"name": "paid"}}]
    for i in range(n):
        rows.append(
            {"id": f"q{i}", "type": "single", "question": f"第{i}题：下列哪一项是正确的（）。",
             "answer": LETTERS[i % 4], "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"},
             "subject": ["法学", "会计"][i % 2]}
        )  # fmt: skip
    return write_jsonl(path, rows)


def kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`kaoshi ARGS` in this process: its exit code, stdout and stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
