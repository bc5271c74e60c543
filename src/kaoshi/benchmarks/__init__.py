"""Benchmarks: each one package (kaoshi.benchmarks.<name>) owning its loader, subject table, prompts,
leaderboard layout and exporters, registered by name. Another installed package adds one through the
`kaoshi.benchmarks` entry-point group; a program adds one with `register_benchmark`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

# Names are imported on first use: `kaoshi report` asks the registry for one benchmark's metrics, and
# needs neither the loaders (kaoshi.benchmarks.loading) nor every template by name
# (kaoshi.benchmarks.templates, which imports the user templates' jinja2: about 20 ms).
_EXPORTS = {
    **dict.fromkeys(("Benchmark", "Exporter", "LoadRequest"), "kaoshi.benchmarks.base"),
    **dict.fromkeys(
        ("BENCHMARKS", "detect_benchmark", "load_exam_result", "sample_exam_path"),
        "kaoshi.benchmarks.loading",
    ),
    **dict.fromkeys(
        (
            "benchmark_names",
            "detect",
            "english_names",
            "find_benchmark",
            "get_benchmark",
            "leaderboard_layout",
            "register_benchmark",
            "unregister_benchmark",
        ),
        "kaoshi.benchmarks.registry",
    ),
    **dict.fromkeys(
        ("BENCHMARK_DEFAULTS", "TEMPLATES", "all_templates", "default_template_name", "get_template"),
        "kaoshi.benchmarks.templates",
    ),
    **dict.fromkeys(("DomainLayout", "LeaderboardLayout"), "kaoshi.results.layout"),
}

if TYPE_CHECKING:
    from kaoshi.benchmarks.base import Benchmark, Exporter, LoadRequest
    from kaoshi.benchmarks.loading import BENCHMARKS, detect_benchmark, load_exam_result, sample_exam_path
    from kaoshi.benchmarks.registry import (
        benchmark_names,
        detect,
        english_names,
        find_benchmark,
        get_benchmark,
        leaderboard_layout,
        register_benchmark,
        unregister_benchmark,
    )
    from kaoshi.benchmarks.templates import (
        BENCHMARK_DEFAULTS,
        TEMPLATES,
        all_templates,
        default_template_name,
        get_template,
    )
    from kaoshi.results.layout import DomainLayout, LeaderboardLayout


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "BENCHMARKS",
    "BENCHMARK_DEFAULTS",
    "TEMPLATES",
    "Benchmark",
    "DomainLayout",
    "Exporter",
    "LeaderboardLayout",
    "LoadRequest",
    "all_templates",
    "benchmark_names",
    "default_template_name",
    "detect",
    "detect_benchmark",
    "english_names",
    "find_benchmark",
    "get_benchmark",
    "get_template",
    "leaderboard_layout",
    "load_exam_result",
    "register_benchmark",
    "sample_exam_path",
    "unregister_benchmark",
]
