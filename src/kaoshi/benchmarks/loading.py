"""One entry point: a benchmark name and/or a data path -> a LoadResult, with the invalid-row policy."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Literal

from kaoshi.benchmarks.base import LoadRequest
from kaoshi.benchmarks.common.exam_jsonl import load_kaoshi_jsonl
from kaoshi.benchmarks.registry import BUILTIN_BENCHMARKS, benchmark_names, detect, find_benchmark
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.model import Question
from kaoshi.data.rawio import iter_jsonl, read_bytes, read_text, refuse_special_path
from kaoshi.errors import InputError

OnInvalid = Literal["fail", "skip"]
BENCHMARKS = tuple(BUILTIN_BENCHMARKS)  # kaoshi's own; kaoshi.benchmarks.benchmark_names() adds a user's


def sample_exam_path() -> Path:
    """The bundled sample exam (our own questions), shipped inside the package."""
    return Path(str(resources.files("kaoshi.benchmarks.sample").joinpath("sample.jsonl")))


def detect_benchmark(path: Path) -> str:
    """The benchmark a data path holds, as the benchmarks' detectors tell (kaoshi.benchmarks.detect: the
    most specific claim wins; InputError when several are equally specific). DataError when none claims it."""
    refuse_special_path(path)  # a detector reading a FIFO's opening would wait for a writer forever
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    try:
        name = detect(path)
    except InputError:
        raise  # several benchmarks claim the path: the message names them
    except (ValueError, RecursionError) as exc:
        # A detector that reads the first record met a line Python's json cannot decode (a number of
        # 4,301 digits, nesting 1,000 deep): name the line instead of failing as an internal error.
        first = next((item for item in iter_jsonl(path, read_text(path)) if isinstance(item, RowError)), None)
        errors = (first,) if first is not None else (RowError(str(path), None, None, str(exc)),)
        raise DataError(f"{path}: cannot tell which benchmark this file holds", errors) from None
    if name is None:
        raise DataError(f"{path}: no benchmark reads this path; give --benchmark NAME")
    return name


def load_exam_result(
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
    if data is not None:
        refuse_special_path(data)  # whichever benchmark reads it: a FIFO blocks, /dev/zero never ends
    if benchmark is None:
        if data is None:
            raise DataError("give --benchmark NAME or --data PATH")
        benchmark = detect_benchmark(data)
    found = find_benchmark(benchmark)
    if found is None:
        raise DataError(f"unknown benchmark {benchmark!r} (known: {', '.join(benchmark_names())})")
    chosen = tuple(subjects) if subjects is not None else None
    result = found.load(LoadRequest(data, split, clean, chosen))
    # A loader that leaves the name out still files its runs under the benchmark it was loaded as.
    metadata = {"benchmark": found.name, **result.exam.metadata}
    return replace(result, exam=replace(result.exam, metadata=metadata))


def load_exemplars(path: Path) -> tuple[tuple[Question, ...], str]:
    """Solved questions from a kaoshi JSONL file, every row whatever its split, to serve as any template's
    exemplars (`--exemplars-file`); and the file's content hash, for the run spec."""
    result = load_kaoshi_jsonl(path)
    questions = (*result.exam.fewshot, *result.exam.questions)
    unsolved = [q.id for q in questions if not q.has_answer]
    if unsolved:
        raise DataError(f"{path}: exemplars need answers; question {unsolved[0]!r} has none")
    digest = hashlib.sha256(read_bytes(path)).hexdigest()
    return questions, f"sha256:{digest}"
