"""QualBench (EMNLP 2025): Chinese professional qualification exams in six domains."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, LoadRequest, Specificity
from kaoshi.benchmarks.common.statistics import ANSWER_METRICS
from kaoshi.benchmarks.qualbench.domains import QUALBENCH_DOMAINS
from kaoshi.benchmarks.qualbench.paper_prompt import QUALBENCH_PAPER, QUALBENCH_PAPER_EXPERT
from kaoshi.benchmarks.qualbench.prompts import (
    QUALBENCH_KAOSHI,
    QUALBENCH_KAOSHI_EXPERT,
    QUALBENCH_ZERO,
)
from kaoshi.data.errors import DataError

if TYPE_CHECKING:
    from kaoshi.data.collect import LoadResult

QUALBENCH_HUB_ID = "mengze-hong/QualBench"
# Field names only QualBench's files use; kaoshi's schema says type, explanation and id instead.
_QUALBENCH_KEYS = {"question_type", "sub_domain", "explan", "idx"}


def load(request: LoadRequest) -> LoadResult:
    """QualBench.json or the shuffled JSONL from `request.data`, else the hub copy; one split, 'test'."""
    if request.split not in (None, "test"):
        raise DataError(f"QualBench has a single split ('test'), got {request.split!r}")
    # Late import: the loader (and kaoshi.data's readers), not read where a report looks up the metrics
    from kaoshi.benchmarks.qualbench.loader import load_qualbench, load_qualbench_hub

    if request.data is None:
        return load_qualbench_hub(QUALBENCH_HUB_ID)
    return load_qualbench(request.data, clean=request.clean)


def holds_qualbench(path: Path) -> Specificity | None:
    """Any .json file (QualBench.json is a JSON array: a claim on the file's type alone, which a format
    told by its fields beats), or JSONL whose first record has QualBench's fields."""
    if path.is_dir():
        return None
    if path.suffix == ".json":
        return Specificity.FILE_TYPE
    # Late import: the file readers only where a path is detected, not where the benchmark is looked up
    from kaoshi.benchmarks.common.sniff import first_jsonl_record

    first = first_jsonl_record(path)  # a line that is not JSON: the kaoshi loader reports it
    return Specificity.FORMAT if isinstance(first, dict) and _QUALBENCH_KEYS & set(first) else None


QUALBENCH = Benchmark(
    name="qualbench",
    # the paper's F1, and the weighted F1 beside it, labelled, so neither is taken for the other
    metrics=ANSWER_METRICS,
    description="QualBench: 17,316 questions from Chinese professional qualification exams, six domains",
    load=load,
    default_prompt="qualbench",
    detect=holds_qualbench,
    hub_id=QUALBENCH_HUB_ID,
    categories=QUALBENCH_DOMAINS,
    formats="QualBench.json (a JSON array) or its shuffled JSONL, or the hub",
    splits=("test",),
    size="17,316 questions in six domains",
    licence="Apache-2.0 (the repository)",
    templates=(
        QUALBENCH_PAPER,
        QUALBENCH_PAPER_EXPERT,
        QUALBENCH_KAOSHI,
        QUALBENCH_KAOSHI_EXPERT,
        QUALBENCH_ZERO,
    ),
    english_names=QUALBENCH_DOMAINS,
)
