"""A user's exam in kaoshi's own JSONL schema (README, "Exam file format"), e.g. an LHMKE paper."""

from __future__ import annotations

from pathlib import Path

from kaoshi.benchmarks.base import Benchmark, LoadRequest
from kaoshi.benchmarks.kaoshi_jsonl.loader import load_kaoshi_jsonl
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.results.metrics import ANSWER_STATISTICS


def load(request: LoadRequest) -> LoadResult:
    """The exam in `request.data`; rows of split 'dev' are the few-shot pool."""
    if request.data is None:
        raise DataError("benchmark 'kaoshi' needs --data PATH to a kaoshi JSONL exam")
    return load_kaoshi_jsonl(request.data, request.split)


def any_file(path: Path) -> bool:
    """kaoshi's own format is what a file is read as when no other benchmark claims it; its loader then
    says exactly which rows do not fit."""
    return not path.is_dir()


KAOSHI = Benchmark(
    name="kaoshi",
    statistics=ANSWER_STATISTICS,  # an exam of any types and domains: both statistics, labelled
    description="an exam in kaoshi's own JSONL schema: any question types, points, subjects, dev rows",
    load=load,
    default_prompt="lhmke",
    detect=any_file,
    formats="a kaoshi JSONL file (README: Exam file format)",
    splits=("dev", "test"),
    size="yours",
)
