"""Benchmarks by name: kaoshi's own are imported on first use, a user's are added by register_benchmark."""

from __future__ import annotations

import importlib
from pathlib import Path

from kaoshi.benchmarks.base import Benchmark
from kaoshi.errors import InputError, UnknownName

# name -> "module:attribute". Detection asks in this order, so kaoshi's own JSONL format, whose detector
# takes any file, comes last.
BUILTIN_BENCHMARKS: dict[str, str] = {
    "sample": "kaoshi.benchmarks.sample:SAMPLE",
    "cmexam": "kaoshi.benchmarks.cmexam:CMEXAM",  # a CSV by its header, before C-Eval takes any folder
    "cflue": "kaoshi.benchmarks.cflue:CFLUE",  # a JSON array by its fields, before QualBench takes any .json
    "gaokao-bench": "kaoshi.benchmarks.gaokao:GAOKAO_BENCH",  # its folders or files, before QualBench
    "qualbench": "kaoshi.benchmarks.qualbench:QUALBENCH",
    "agieval": "kaoshi.benchmarks.agieval:AGIEVAL",  # a folder by its task files, before C-Eval's any folder
    "logiqa": "kaoshi.benchmarks.logiqa:LOGIQA",  # a .txt by its 8-line records, before kaoshi's any file
    "cmmlu": "kaoshi.benchmarks.cmmlu:CMMLU",  # data/{dev,test}/<subject>.csv, or a CSV by its header
    "fineval": "kaoshi.benchmarks.fineval:FINEVAL",  # C-Eval's layout with FinEval's subjects
    "m3ke": "kaoshi.benchmarks.m3ke:M3KE",  # data/{dev,test}/<task>.jsonl, or a task file by its name
    "ceval": "kaoshi.benchmarks.ceval:CEVAL",
    "ceval-hard": "kaoshi.benchmarks.ceval:CEVAL_HARD",
    "kaoshi": "kaoshi.benchmarks.kaoshi_jsonl:KAOSHI",
}
_registered: dict[str, Benchmark] = {}


def register_benchmark(benchmark: Benchmark, *, replace: bool = False) -> Benchmark:
    """Make `benchmark` known by its name to load_exam, `kaoshi run --benchmark`, the default prompt and
    the leaderboard; returns it. `replace` lets it take over a name already known (kaoshi's own too)."""
    if not isinstance(benchmark, Benchmark):
        raise TypeError(f"register_benchmark takes a kaoshi.benchmarks.Benchmark, got {type(benchmark)!r}")
    if not benchmark.name.strip():
        raise InputError("a benchmark needs a name")
    if not replace and benchmark.name in benchmark_names():
        raise InputError(f"benchmark {benchmark.name!r} is already known (replace=True to take it over)")
    _registered[benchmark.name] = benchmark
    return benchmark


def unregister_benchmark(name: str) -> None:
    """Forget a benchmark register_benchmark added (kaoshi's own come back if it had replaced one)."""
    if _registered.pop(name, None) is None:
        raise UnknownName(f"no benchmark {name!r} was registered")


def find_benchmark(name: str) -> Benchmark | None:
    """The benchmark called `name`, or None."""
    if name in _registered:
        return _registered[name]
    target = BUILTIN_BENCHMARKS.get(name)
    if target is None:
        return None
    module, _, attribute = target.partition(":")
    found: Benchmark = getattr(importlib.import_module(module), attribute)
    return found


def get_benchmark(name: str) -> Benchmark:
    """The benchmark called `name`; KeyError naming the known ones."""
    found = find_benchmark(name)
    if found is None:
        raise UnknownName(f"unknown benchmark {name!r} (known: {', '.join(benchmark_names())})")
    return found


def benchmark_names() -> tuple[str, ...]:
    """kaoshi's own benchmarks, then the registered ones, in the order they were added."""
    return (*BUILTIN_BENCHMARKS, *(name for name in _registered if name not in BUILTIN_BENCHMARKS))


def detect(path: Path) -> str | None:
    """The name of the first benchmark whose detector claims the existing `path`: registered ones first,
    newest first, so a user's format is seen before kaoshi's catch-all; None when none does."""
    builtin = (find_benchmark(name) for name in BUILTIN_BENCHMARKS if name not in _registered)
    for benchmark in (*reversed(_registered.values()), *builtin):
        if benchmark is not None and benchmark.detect is not None and benchmark.detect(path):
            return benchmark.name
    return None
