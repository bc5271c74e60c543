"""Benchmarks: each one module owning its loader, subject table, default prompt, leaderboard layout and
exporters, registered by name. A new benchmark is one module that calls `register_benchmark`."""

from kaoshi.benchmarks.base import Benchmark, Exporter, LoadRequest
from kaoshi.benchmarks.layout import DomainLayout, LeaderboardLayout
from kaoshi.benchmarks.registry import (
    benchmark_names,
    detect,
    find_benchmark,
    get_benchmark,
    register_benchmark,
    unregister_benchmark,
)

__all__ = [
    "Benchmark",
    "DomainLayout",
    "Exporter",
    "LeaderboardLayout",
    "LoadRequest",
    "benchmark_names",
    "detect",
    "find_benchmark",
    "get_benchmark",
    "register_benchmark",
    "unregister_benchmark",
]
