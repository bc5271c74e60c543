"""Exams as files: an exam with its options shuffled, a train/test split, written as kaoshi JSONL."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.data.model import Exam
from kaoshi.data.shuffle import shuffle_exam as shuffled
from kaoshi.data.split import Split, split_exam
from kaoshi.data.writer import exam_header, write_exam

MANIFEST = "manifest.json"


def shuffle_exam(exam: Exam, seed: int = 0) -> Exam:
    """The exam with every choice question's options permuted (gold letters follow; each question keeps
    its original letters, so answers can be mapped back: the contamination study)."""
    return shuffled(exam, seed)


def save_exam(exam: Exam, path: str | Path, *, header: dict[str, Any] | None = None) -> int:
    """Write the exam (its few-shot pool and questions) as kaoshi JSONL; how many questions were written.
    The header keeps the exam's name, description and standard scores, and `header`'s keys."""
    return write_exam(Path(path), (*exam.fewshot, *exam.questions), {**exam_header(exam), **(header or {})})


@dataclass(frozen=True)
class SplitFiles:
    """A train/test split written to a folder: train.jsonl, test.jsonl and manifest.json."""

    folder: Path
    split: Split


def split_to_files(
    exam: Exam,
    folder: str | Path,
    *,
    train: float,
    seed: int = 0,
    stratify: Sequence[str] = (),
    source: str | None = None,
) -> SplitFiles:
    """A deterministic, stratified split (repeated questions kept on one side), written for
    `kaoshi.finetune` and evaluation: the few-shot pool goes in both files; the manifest records the
    seed, ratio, strata, ids and each question's content key (`source`: where the exam came from)."""
    split = split_exam(exam, train, seed, list(stratify))
    out = Path(folder)
    header = exam_header(exam)
    write_exam(out / "train.jsonl", (*exam.fewshot, *split.train), header)
    write_exam(out / "test.jsonl", (*exam.fewshot, *split.test), header)
    manifest = split.manifest(source or exam.name)
    (out / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return SplitFiles(out, split)
