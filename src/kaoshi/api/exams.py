"""`kaoshi.load_exam`: an exam by benchmark name and/or path, what loading noticed told as it happens."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.loading import OnInvalid
from kaoshi.data import Exam, LoadResult

_log = logging.getLogger("kaoshi")


def load_exam(
    benchmark: str | None = None,
    data: str | Path | None = None,
    split: str | None = None,
    *,
    on_invalid: OnInvalid = "fail",
    clean: bool = False,
    subjects: Iterable[str] | None = None,
    notify: Callable[[str], None] | None = None,
) -> Exam:
    """Load an exam: "sample", "qualbench", "ceval", "ceval-hard", "kaoshi" (a JSONL file), or detected
    from `data`; hub benchmarks load from Hugging Face without `data`.

    on_invalid: "fail" raises DataError naming every bad row (file, line, field); "skip" leaves them out
    and says how many. clean: QualBench's cleaning rule. Warnings, skipped rows and cleaned-out questions
    go to `notify` (default: the `kaoshi` logger); `load_exam_result` returns them all as values."""
    result = load_exam_result(benchmark, data, split, on_invalid=on_invalid, clean=clean, subjects=subjects)
    for line in load_notes(result):
        (notify or _log.warning)(line)
    return result.exam


def load_notes(result: LoadResult) -> list[str]:
    """What loading noticed, one line each: warnings, skipped rows, questions the cleaning dropped."""
    lines = [f"warning: {warning}" for warning in result.warnings]
    if result.errors:
        lines.append(f"skipped {len(result.errors)} invalid row(s); first: {result.errors[0]}")
    if result.dropped:
        lines.append(f"cleaning dropped {len(result.dropped)} question(s); first: {result.dropped[0].reason}")
    return lines
