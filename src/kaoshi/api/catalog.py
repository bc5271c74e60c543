"""`kaoshi.list_benchmarks`: the benchmarks kaoshi can load, as `kaoshi benchmarks` lists them."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kaoshi.benchmarks import benchmark_names, get_benchmark
from kaoshi.benchmarks.base import PublishedCheck


@dataclass(frozen=True)
class BenchmarkInfo:
    """What a user needs to choose a benchmark: its name, what it is, how it loads and is prompted."""

    name: str
    description: str
    default_prompt: str
    hub_id: str | None  # loaded from the Hugging Face hub without --data (needs kaoshi[hub])
    detected: bool  # --data PATH alone finds it, without --benchmark
    subjects: int  # subjects or domains with a category (0: none listed)
    exporters: tuple[str, ...]  # kaoshi export KIND
    formats: str  # what --data takes
    splits: tuple[str, ...]
    size: str  # as published, e.g. "11,582 test + 335 dev"
    licence: str  # the data's licence, as its authors state it
    published: PublishedCheck | None = None  # checked on the benchmark's own repository, at a commit

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "default_prompt": self.default_prompt,
            "hub_id": self.hub_id,
            "detected_from_data": self.detected,
            "subjects": self.subjects,
            "exporters": list(self.exporters),
            "formats": self.formats,
            "splits": list(self.splits),
            "size": self.size,
            "licence": self.licence,
            "published": asdict(self.published) if self.published is not None else None,
        }


def list_benchmarks() -> list[BenchmarkInfo]:
    """Every registered benchmark (kaoshi's own and those added with `register_benchmark`)."""
    listed = []
    for name in benchmark_names():
        benchmark = get_benchmark(name)
        listed.append(
            BenchmarkInfo(
                name=benchmark.name,
                description=benchmark.description,
                default_prompt=benchmark.default_prompt,
                hub_id=benchmark.hub_id,
                detected=benchmark.detect is not None,
                subjects=len(benchmark.categories),
                exporters=tuple(e.name for e in benchmark.exporters),
                formats=benchmark.formats,
                splits=benchmark.splits,
                size=benchmark.size,
                licence=benchmark.licence,
                published=benchmark.published,
            )
        )
    return listed
