"""A user's exam in kaoshi's own JSONL schema (docs/how-to/own-exam.md), e.g. an LHMKE paper."""

from __future__ import annotations

from pathlib import Path

from kaoshi.benchmarks.base import Benchmark, LoadRequest, Specificity
from kaoshi.benchmarks.common.exam_jsonl import load_kaoshi_jsonl
from kaoshi.benchmarks.common.statistics import ANSWER_METRICS
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError


def load(request: LoadRequest) -> LoadResult:
    """The exam in `request.data`; rows of split 'dev' are the few-shot pool."""
    if request.data is None:
        raise DataError("benchmark 'kaoshi' needs --data PATH to a kaoshi JSONL exam")
    return load_kaoshi_jsonl(request.data, request.split)


def any_file(path: Path) -> Specificity | None:
    """kaoshi's own format is what a file is read as when no other benchmark claims it (the least specific
    claim there is); its loader then says exactly which rows do not fit."""
    return None if path.is_dir() else Specificity.ANY_FILE


KAOSHI = Benchmark(
    name="kaoshi",
    metrics=ANSWER_METRICS,  # an exam of any types and groups: both F1s, labelled, and category averages
    description="an exam in kaoshi's own JSONL schema: any question types, points, subjects, dev rows",
    load=load,
    default_prompt="lhmke",
    detect=any_file,
    formats="a kaoshi JSONL file (docs/how-to/own-exam.md)",
    splits=("dev", "test"),
    size="yours",
)
