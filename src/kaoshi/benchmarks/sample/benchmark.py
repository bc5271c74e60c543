"""The sample exam kaoshi ships: its own questions in its JSONL schema, for demos and first runs."""

from __future__ import annotations

from kaoshi.benchmarks.base import Benchmark, LoadRequest
from kaoshi.benchmarks.common.exam_jsonl import load_kaoshi_jsonl
from kaoshi.benchmarks.common.statistics import ANSWER_METRICS
from kaoshi.benchmarks.loading import sample_exam_path
from kaoshi.data.collect import LoadResult


def load(request: LoadRequest) -> LoadResult:
    """The bundled sample exam (or a file in its schema given as data)."""
    return load_kaoshi_jsonl(request.data or sample_exam_path(), request.split, "sample")


SAMPLE = Benchmark(
    name="sample",
    metrics=ANSWER_METRICS,  # the sample shows what a QualBench-style exam reports
    description="the sample exam bundled with kaoshi: its own questions of every type",
    load=load,
    default_prompt="lhmke",
    formats="shipped with kaoshi (kaoshi JSONL)",
    splits=("dev", "test"),
    size="44 questions + 8 dev",
    licence="kaoshi's own questions",
)
