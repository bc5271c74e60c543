"""Every prompt template by name: kaoshi's generic and registered ones (kaoshi.prompts.registry), then each
benchmark's own (`Benchmark.templates`), and each benchmark's default."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kaoshi.benchmarks.registry import benchmark_names, find_benchmark
from kaoshi.errors import UnknownName
from kaoshi.prompts.base import Template
from kaoshi.prompts.registry import is_template_file, load_template_file, registered_templates


def all_templates() -> dict[str, Template]:
    """Templates by name: generic and registered first (a registered one wins), then the benchmarks'."""
    found = registered_templates()
    for name in benchmark_names():
        benchmark = find_benchmark(name)
        for template in benchmark.templates if benchmark is not None else ():
            found.setdefault(template.name, template)
    return found


class _Templates(Mapping[str, Template]):
    """all_templates() as a read-only mapping that sees benchmarks registered later."""

    def __getitem__(self, name: str) -> Template:
        return all_templates()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(all_templates())

    def __len__(self) -> int:
        return len(all_templates())


TEMPLATES: Mapping[str, Template] = _Templates()


def get_template(name: str) -> Template:
    """A template by name, or `file:PATH` (also a bare path ending in .j2 / .jinja) for a user template."""
    known = all_templates()
    if name in known:
        return known[name]
    if is_template_file(name):
        return load_template_file(name)
    raise UnknownName(f"unknown prompt {name!r} (built in: {', '.join(sorted(known))}; or file:PATH.j2)")


class _BenchmarkDefaults(Mapping[str, str]):
    """Each known benchmark's default template name, as its entry in the benchmark registry says."""

    def __getitem__(self, benchmark: str) -> str:
        found = find_benchmark(benchmark)
        if found is None:
            raise KeyError(benchmark)
        return found.default_prompt

    def __iter__(self) -> Iterator[str]:
        return iter(benchmark_names())

    def __len__(self) -> int:
        return len(benchmark_names())


BENCHMARK_DEFAULTS: Mapping[str, str] = _BenchmarkDefaults()


def default_template_name(benchmark: str) -> str:
    """The template a run on `benchmark` uses without --prompt ('default' for a benchmark kaoshi does not
    know, e.g. a run stored by a plugin that is not installed)."""
    return BENCHMARK_DEFAULTS.get(benchmark, "default")
