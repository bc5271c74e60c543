"""Benchmarks by name: kaoshi's own are imported on first use; another installed package adds its own
through the `kaoshi.benchmarks` entry-point group (name = "module:attribute" of a Benchmark); a program
adds one with register_benchmark."""

from __future__ import annotations

import importlib
import logging
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, Specificity
from kaoshi.errors import InputError, UnknownName
from kaoshi.results.layout import DomainLayout, LeaderboardLayout

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

# name -> "module:attribute", in the order `kaoshi benchmarks` lists them. Detection asks every one and
# takes the most specific claim (detect), so this order decides nothing there.
BUILTIN_BENCHMARKS: dict[str, str] = {
    "sample": "kaoshi.benchmarks.sample.benchmark:SAMPLE",
    "cmexam": "kaoshi.benchmarks.cmexam.benchmark:CMEXAM",
    "cflue": "kaoshi.benchmarks.cflue.benchmark:CFLUE",
    "gaokao-bench": "kaoshi.benchmarks.gaokao.benchmark:GAOKAO_BENCH",
    "qualbench": "kaoshi.benchmarks.qualbench.benchmark:QUALBENCH",
    "agieval": "kaoshi.benchmarks.agieval.benchmark:AGIEVAL",
    "logiqa": "kaoshi.benchmarks.logiqa.benchmark:LOGIQA",
    "cmmlu": "kaoshi.benchmarks.cmmlu.benchmark:CMMLU",
    "fineval": "kaoshi.benchmarks.fineval.benchmark:FINEVAL",
    "m3ke": "kaoshi.benchmarks.m3ke.benchmark:M3KE",
    "ceval": "kaoshi.benchmarks.ceval.benchmark:CEVAL",
    "ceval-hard": "kaoshi.benchmarks.ceval.benchmark:CEVAL_HARD",
    "kaoshi": "kaoshi.benchmarks.kaoshi_jsonl.benchmark:KAOSHI",
}
ENTRY_POINT_GROUP = "kaoshi.benchmarks"
_registered: dict[str, Benchmark] = {}
log = logging.getLogger("kaoshi")


@cache
def plugin_benchmarks() -> dict[str, EntryPoint]:
    """The benchmarks other installed packages declare (entry points, read once per process); a name
    kaoshi already has is skipped with a warning."""
    # Here, not at the top: importlib.metadata costs about 11 ms, and looking up one of kaoshi's own
    # benchmarks (`kaoshi report`'s metrics) never reads the entry points.
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name in BUILTIN_BENCHMARKS or entry.name in found:
            log.warning(
                "benchmark %r from the package %s is skipped: the name is taken", entry.name, entry.value
            )
            continue
        found[entry.name] = entry
    return found


def _load_plugin(entry: EntryPoint) -> Benchmark:
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


# How equally specific claims were made, for the message refusing them.
_HOW = {
    Specificity.ANY_FILE: "as any file",
    Specificity.FILE_TYPE: "by the file's type alone",
    Specificity.FORMAT: "by its format",
    Specificity.OWN_NAMES: "by their own subject or task names",
}


def detect(path: Path) -> str | None:
    """The name of the benchmark whose detector claims the existing `path` most specifically: every known
    benchmark is asked (kaoshi's own, installed packages', registered ones alike), whatever their order;
    None when none claims it; InputError naming them when several claim it equally."""
    claims = detection_claims(path)
    if not claims:
        return None
    best = max(claims.values())
    tied = [name for name, claim in claims.items() if claim == best]
    if len(tied) > 1:
        raise InputError(
            f"{path}: benchmarks {', '.join(tied)} each claim this path {_HOW[best]}; give --benchmark NAME "
            "to pick one"
        )
    return tied[0]


def detection_claims(path: Path) -> dict[str, Specificity]:
    """Each benchmark whose detector claims the existing `path`, and how specifically (Specificity; a
    detector's True, or any other truthy answer, is FORMAT; a falsy one claims nothing), in
    benchmark_names() order."""
    claims: dict[str, Specificity] = {}
    for name in benchmark_names():
        benchmark = find_benchmark(name)
        if benchmark is None or benchmark.detect is None:
            continue
        claim = benchmark.detect(path)
        if isinstance(claim, Specificity):
            claims[name] = claim
        elif claim:  # True, or any truthy answer (a regular expression's match) a yes/no detector gives
            claims[name] = Specificity.FORMAT
    return claims


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
