"""Built-in templates by name, user template files, and each benchmark's default."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from kaoshi.benchmarks.registry import benchmark_names, find_benchmark
from kaoshi.data.model import Exam
from kaoshi.errors import UnknownName
from kaoshi.prompts.agieval import AGIEVAL
from kaoshi.prompts.base import Template
from kaoshi.prompts.ceval import CEVAL_ANSWER_ONLY, CEVAL_COT, FINEVAL_ANSWER_ONLY, FINEVAL_COT
from kaoshi.prompts.cflue import CFLUE_KAOSHI
from kaoshi.prompts.cflue_official import CFLUE
from kaoshi.prompts.cmexam import CMEXAM
from kaoshi.prompts.cmmlu import CMMLU_ANSWER_ONLY, CMMLU_COT
from kaoshi.prompts.gaokao import GAOKAO, GAOKAO_KAOSHI
from kaoshi.prompts.plain import PlainTemplate
from kaoshi.prompts.qualbench import LHMKE, QUALBENCH_KAOSHI, QUALBENCH_KAOSHI_EXPERT, QUALBENCH_ZERO
from kaoshi.prompts.qualbench_paper import QUALBENCH_PAPER, QUALBENCH_PAPER_EXPERT
from kaoshi.prompts.user import UserTemplate

TEMPLATES: dict[str, Template] = {
    t.name: t
    for t in (
        PlainTemplate(),
        CEVAL_ANSWER_ONLY,
        CEVAL_COT,
        QUALBENCH_PAPER,
        QUALBENCH_PAPER_EXPERT,
        QUALBENCH_KAOSHI,
        QUALBENCH_KAOSHI_EXPERT,
        QUALBENCH_ZERO,
        LHMKE,
        CMMLU_ANSWER_ONLY,
        CMMLU_COT,
        FINEVAL_ANSWER_ONLY,
        FINEVAL_COT,
        CFLUE,
        CFLUE_KAOSHI,
        CMEXAM,
        AGIEVAL,
        GAOKAO,
        GAOKAO_KAOSHI,
    )
}


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
    know, e.g. a run stored by a plugin that is not loaded)."""
    return BENCHMARK_DEFAULTS.get(benchmark, "default")


def get_template(name: str) -> Template:
    """A built-in template, or `file:PATH` (also a bare path ending in .j2 / .jinja) for a user template."""
    if name in TEMPLATES:
        return TEMPLATES[name]
    path = name.removeprefix("file:")
    if name.startswith("file:") or path.endswith((".j2", ".jinja", ".jinja2")):
        return UserTemplate.load(Path(path))
    raise UnknownName(f"unknown prompt {name!r} (built in: {', '.join(sorted(TEMPLATES))}; or file:PATH.j2)")


def exemplars_for_run(
    template: Template, exam: Exam, pinned: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The exemplar ids a run pins, and notes to show. Templates with fixed exemplars (the QualBench
    protocol's demos) find them once for the whole run, so the run spec records which were used."""
    prepare = getattr(template, "prepare", None)
    if prepare is None:
        return pinned, ()
    ids, notes = prepare(exam, pinned)
    return tuple(ids), tuple(notes)
