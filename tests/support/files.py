"""Exam files written in each benchmark's published format, for tests that load them."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from kaoshi.benchmarks.ceval.subjects import CEVAL_SUBJECTS


def write_jsonl(path: Path, rows: list[Any], *, newline: str = "\n", bom: bool = False) -> Path:
    text = (
        newline.join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + newline
    )
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def single_choice_exam(path: Path, n: int, name: str = "exam") -> Path:
    """A kaoshi JSONL exam of `n` single-choice questions q0..q{n-1} ("第i题：…"), gold A, B, C, D in turn."""
    rows: list[object] = [{"exam": {"name": name}}]
    for i in range(n):
        rows.append(
            {"id": f"q{i}", "type": "single", "question": f"第{i}题：甲乙丙丁哪一个对（）。",
             "answer": "ABCD"[i % 4], "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}}
        )  # fmt: skip
    return write_jsonl(path, rows)


# -- C-Eval: {split}/{subject}_{split}.csv ----------------------------------------------------------------
CEVAL_HEADER = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]

CEVAL_ROWS_PER_SUBJECT = 3


def write_csv(path: Path, header: list[str], rows: list[list[str]], *, bom: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def make_ceval(root: Path) -> Path:
    for subject in ("computer_network", "college_physics"):
        write_csv(
            root / "dev" / f"{subject}_dev.csv",
            CEVAL_HEADER,
            [
                [str(i), f"{subject} 例题{i}____", "甲", "乙", "丙", "丁", "ABCD"[i % 4], f"解析{i}"]
                for i in range(5)
            ],
        )
        write_csv(
            root / "val" / f"{subject}_val.csv",
            CEVAL_HEADER,
            [
                ["0", "第一题____", "1", "2", "3", "4", "C", ""],
                ["1", "第二题，\n含换行____", "a", "b", "c", "d", "A", ""],
                ["2", "第三题____", "w", "x", "y", "z", "D", ""],
            ],
        )
        write_csv(
            root / "test" / f"{subject}_test.csv",
            ["id", "question", "A", "B", "C", "D"],
            [["0", "测试题____", "1", "2", "3", "4"]],
        )
    return root


def full_ceval(root: Path) -> Path:
    """Every subject: 5 dev, 2 val (gold C), CEVAL_ROWS_PER_SUBJECT test questions (no answers)."""
    for subject in CEVAL_SUBJECTS:
        write_csv(
            root / "dev" / f"{subject}_dev.csv",
            CEVAL_HEADER,
            [[str(i), f"{subject} 例题{i}", "甲", "乙", "丙", "丁", "ABCD"[i % 4], "解析"] for i in range(5)],
        )
        write_csv(
            root / "val" / f"{subject}_val.csv",
            CEVAL_HEADER,
            [[str(i), f"{subject} 验证{i}", "1", "2", "3", "4", "C", ""] for i in range(2)],
        )
        write_csv(
            root / "test" / f"{subject}_test.csv",
            ["id", "question", "A", "B", "C", "D"],
            [[str(i), f"{subject} 测试{i}", "1", "2", "3", "4"] for i in range(CEVAL_ROWS_PER_SUBJECT)],
        )
    return root


# -- QualBench: the published JSON array --------------------------------------------------------------------
QUALBENCH_ORIGINAL = [
    {
        "idx": 1,
        "question_type": "单选题",
        "domain": "消防",
        "question": "扑救带电设备初起火灾应选用（）。\nA．清水\nB．泡沫\nC．二氧化碳\nD．砂土",
        "answer": "C",
        "explanation": "二氧化碳不导电。",
    },
    {
        "idx": 2,
        "question_type": "多选题",
        "domain": "安全生产",
        "question": "燃烧的必要条件有（）。\nA.可燃物\nB.助燃物\nC.点火源\nD.水\nE.沙",
        "answer": "ABC",
        "explanation": "燃烧三要素。",
    },
    {
        "idx": 3,
        "question_type": "判断题",
        "domain": "银行保险",
        "question": "分散投资可以降低非系统性风险。",
        "answer": "正确",
        "explanation": "",
    },
    {
        "idx": 4,
        "question_type": "判断题",
        "domain": "建筑工程",
        "question": "钢筋进场无需复验。",
        "answer": "错误",
        "explanation": "需复验。",
    },
]


def write_qualbench_json(path: Path, rows: list[dict[str, object]]) -> Path:
    # The published file is an indented JSON array, one key per line.
    path.write_text(json.dumps(rows, ensure_ascii=False, indent=4), encoding="utf-8")
    return path
