"""One entry point: a benchmark name and/or a data path -> a LoadResult, with the invalid-row policy."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Literal

from kaoshi.data.ceval import load_ceval
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.data.hub import CEVAL_HUB_ID, QUALBENCH_HUB_ID, load_ceval_hub, load_qualbench_hub
from kaoshi.data.kaoshi_jsonl import load_kaoshi_jsonl
from kaoshi.data.model import Question
from kaoshi.data.qualbench import load_qualbench
from kaoshi.data.rawio import read_text

OnInvalid = Literal["fail", "skip"]
BENCHMARKS = ("sample", "qualbench", "ceval", "ceval-hard", "kaoshi")
_QUALBENCH_KEYS = {"question_type", "sub_domain", "explan", "idx"}


def sample_exam_path() -> Path:
    """The bundled sample exam (our own questions), shipped inside the package."""
    return Path(str(resources.files("kaoshi.data").joinpath("samples/sample.jsonl")))


def detect_benchmark(path: Path) -> str:
    """Guess the format of a data path: a folder is C-Eval, .json is QualBench, .jsonl is read to tell."""
    if path.is_dir():
        return "ceval"
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.suffix == ".json":
        return "qualbench"
    for line in read_text(path).split("\n"):
        if line.strip():
            try:
                first = json.loads(line)
            except json.JSONDecodeError:
                return "kaoshi"  # the kaoshi loader reports the bad line
            if isinstance(first, dict) and _QUALBENCH_KEYS & set(first):
                return "qualbench"
            return "kaoshi"
    return "kaoshi"


def load_exam(
    benchmark: str | None = None,
    data: str | Path | None = None,
    split: str | None = None,
    *,
    on_invalid: OnInvalid = "fail",
    clean: bool = False,
    subjects: Iterable[str] | None = None,
) -> LoadResult:
    """Load an exam. With on_invalid='fail' any bad row raises DataError listing every bad row;
    with 'skip' bad rows are left out and returned in LoadResult.errors."""
    result = _dispatch(benchmark, Path(data) if data is not None else None, split, clean, subjects)
    if result.errors and on_invalid == "fail":
        where = result.exam.metadata.get("path", benchmark)
        raise DataError(
            f"{len(result.errors)} invalid row(s) in {where} (use --on-invalid skip to leave them out)",
            result.errors,
        )
    if not result.exam.questions:
        where = result.exam.metadata.get("path", benchmark)
        raise DataError(f"no valid questions in {where}", result.errors)
    # How the exam was loaded, for the run spec (`data` as the caller gave it).
    loaded_with = {
        "data": str(data) if data is not None else None,
        "split": split,
        "on_invalid": on_invalid,
        "clean": clean,
    }
    exam = replace(result.exam, metadata={**result.exam.metadata, "loaded_with": loaded_with})
    return replace(result, exam=exam)


def _dispatch(
    benchmark: str | None, data: Path | None, split: str | None, clean: bool, subjects: Iterable[str] | None
) -> LoadResult:
    if benchmark is None:
        if data is None:
            raise DataError("give --benchmark NAME or --data PATH")
        benchmark = detect_benchmark(data)
    if benchmark == "sample":
        return load_kaoshi_jsonl(data or sample_exam_path(), split, "sample")
    if benchmark == "kaoshi":
        if data is None:
            raise DataError("benchmark 'kaoshi' needs --data PATH to a kaoshi JSONL exam")
        return load_kaoshi_jsonl(data, split)
    if benchmark == "qualbench":
        if split not in (None, "test"):
            raise DataError(f"QualBench has a single split ('test'), got {split!r}")
        if data is None:
            return load_qualbench_hub(QUALBENCH_HUB_ID)
        return load_qualbench(data, clean=clean)
    if benchmark in ("ceval", "ceval-hard"):
        hard = benchmark == "ceval-hard"
        if data is None:
            from kaoshi.data.ceval_subjects import CEVAL_HARD_SUBJECTS

            chosen = subjects or (CEVAL_HARD_SUBJECTS if hard else None)
            return load_ceval_hub(split or "val", chosen, CEVAL_HUB_ID, benchmark)
        return load_ceval(data, split or "val", subjects=subjects, hard=hard)
    raise DataError(f"unknown benchmark {benchmark!r} (known: {', '.join(BENCHMARKS)})")


def load_exemplars(path: Path) -> tuple[tuple[Question, ...], str]:
    """Solved questions from a kaoshi JSONL file, every row whatever its split, to serve as any template's
    exemplars (`--exemplars-file`); and the file's content hash, for the run spec."""
    result = load_kaoshi_jsonl(path)
    questions = (*result.exam.fewshot, *result.exam.questions)
    unsolved = [q.id for q in questions if not q.has_answer]
    if unsolved:
        raise DataError(f"{path}: exemplars need answers; question {unsolved[0]!r} has none")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return questions, f"sha256:{digest}"
