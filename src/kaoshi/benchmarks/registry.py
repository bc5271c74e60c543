"""Benchmarks by name: kaoshi's own are imported on first use; another installed package adds its own
through the `kaoshi.benchmarks` entry-point group (name = "module:attribute" of a Benchmark); a program
adds one with register_benchmark."""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from functools import cache
from pathlib import Path

from kaoshi.benchmarks.base import Benchmark
from kaoshi.errors import InputError, UnknownName
from kaoshi.results.layout import DomainLayout, LeaderboardLayout

# name -> "module:attribute". Detection asks in this order, so kaoshi's own JSONL format, whose detector
# takes any file, comes last.
BUILTIN_BENCHMARKS: dict[str, str] = {
    "sample": "kaoshi.benchmarks.sample.benchmark:SAMPLE",
    # a CSV by its header, before C-Eval takes any folder
    "cmexam": "kaoshi.benchmarks.cmexam.benchmark:CMEXAM",
    # a JSON array by its fields, before QualBench takes any .json
    "cflue": "kaoshi.benchmarks.cflue.benchmark:CFLUE",
    # its folders or files, before QualBench
    "gaokao-bench": "kaoshi.benchmarks.gaokao.benchmark:GAOKAO_BENCH",
    "qualbench": "kaoshi.benchmarks.qualbench.benchmark:QUALBENCH",
    # a folder by its task files, before C-Eval's any folder
    "agieval": "kaoshi.benchmarks.agieval.benchmark:AGIEVAL",
    # a .txt by its 8-line records, before kaoshi's any file
    "logiqa": "kaoshi.benchmarks.logiqa.benchmark:LOGIQA",
    # data/{dev,test}/<subject>.csv, or a CSV by its header
    "cmmlu": "kaoshi.benchmarks.cmmlu.benchmark:CMMLU",
    # C-Eval's layout with FinEval's subjects
    "fineval": "kaoshi.benchmarks.fineval.benchmark:FINEVAL",
    # data/{dev,test}/<task>.jsonl, or a task file by its name
    "m3ke": "kaoshi.benchmarks.m3ke.benchmark:M3KE",
    "ceval": "kaoshi.benchmarks.ceval.benchmark:CEVAL",
    "ceval-hard": "kaoshi.benchmarks.ceval.benchmark:CEVAL_HARD",
    "kaoshi": "kaoshi.benchmarks.kaoshi_jsonl.benchmark:KAOSHI",
}
ENTRY_POINT_GROUP = "kaoshi.benchmarks"
_registered: dict[str, Benchmark] = {}
log = logging.getLogger("kaoshi")


@cache
def plugin_benchmarks() -> dict[str, importlib.metadata.EntryPoint]:
    """The benchmarks other installed packages declare (entry points, read once per process); a name
    kaoshi already has is skipped with a warning."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in BUILTIN_BENCHMARKS or entry.name in found:
            log.warning(
                "benchmark %r from the package %s is skipped: the name is taken", entry.name, entry.value
            )
            continue
        found[entry.name] = entry
    return found


def _load_plugin(entry: importlib.metadata.EntryPoint) -> Benchmark:
    try:
        loaded = entry.load()
    except Exception as exc:  # a broken plugin names itself instead of breaking every command
        raise InputError(f"benchmark {entry.name!r} ({entry.value}) could not be imported: {exc}") from exc
    benchmark = loaded() if callable(loaded) and not isinstance(loaded, Benchmark) else loaded
    if not isinstance(benchmark, Benchmark) or benchmark.name != entry.name:
        raise InputError(
            f"entry point {entry.name!r} ({entry.value}) must name a kaoshi.benchmarks.Benchmark"
            f" called {entry.name!r}"
        )
    return benchmark


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
        plugin = plugin_benchmarks().get(name)
        return None if plugin is None else _load_plugin(plugin)
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
    """kaoshi's own benchmarks, then installed packages' (by name), then the registered ones in the order
    they were added."""
    plugins = sorted(name for name in plugin_benchmarks() if name not in _registered)
    return (*BUILTIN_BENCHMARKS, *plugins, *(name for name in _registered if name not in BUILTIN_BENCHMARKS))


def detect(path: Path) -> str | None:
    """The name of the first benchmark whose detector claims the existing `path`: registered ones first,
    newest first, so a user's format is seen before kaoshi's catch-all; None when none does."""
    builtin = (find_benchmark(name) for name in BUILTIN_BENCHMARKS if name not in _registered)
    plugins = (find_benchmark(name) for name in sorted(plugin_benchmarks()) if name not in _registered)
    for benchmark in (*reversed(_registered.values()), *plugins, *builtin):
        if benchmark is not None and benchmark.detect is not None and benchmark.detect(path):
            return benchmark.name
    return None


def english_names() -> dict[str, str]:
    """Chinese subject and domain names -> English, as the known benchmarks' papers name them."""
    names: dict[str, str] = {}
    for name in benchmark_names():
        benchmark = find_benchmark(name)
        if benchmark is not None:
            names.update(benchmark.english_names)
    return names


def leaderboard_layout(benchmark: str) -> LeaderboardLayout:
    """The benchmark's own leaderboard columns; a column per domain for a benchmark kaoshi does not know
    (a run stored by a plugin that is not installed)."""
    found = find_benchmark(benchmark)
    return found.leaderboard if found is not None else DomainLayout()
