"""The documentation site's benchmark pages, written from the registry when the site is built (docs/hooks.py),
so that a page cannot disagree with the code: an index of every benchmark `list_benchmarks()` returns and a
page for each, with what was checked against its published repository and what its runs report."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Sequence

from kaoshi.api.catalog import BenchmarkInfo, list_benchmarks
from kaoshi.benchmarks import get_benchmark, get_template
from kaoshi.benchmarks.base import Benchmark, PublishedCheck
from kaoshi.benchmarks.registry import BUILTIN_BENCHMARKS, plugin_benchmarks
from kaoshi.errors import UnknownName
from kaoshi.report.markdown_text import code_span, markdown_cell, markdown_text
from kaoshi.results.layout import DomainLayout

INDEX_PAGE = "benchmarks/index.md"
NONE = "—"


def benchmark_page_path(name: str) -> str:
    """Where a benchmark's page lives in the site, relative to the docs folder."""
    return f"benchmarks/{name}.md"


def benchmark_pages() -> dict[str, str]:
    """Every generated page, path (relative to the docs folder) -> Markdown: the index first, then one
    page per benchmark in the order `kaoshi benchmarks` lists them."""
    listed = list_benchmarks()
    pages = {INDEX_PAGE: benchmarks_index(listed)}
    for info in listed:
        pages[benchmark_page_path(info.name)] = benchmark_page(info)
    return pages


def benchmarks_index(listed: Sequence[BenchmarkInfo]) -> str:
    """The Benchmarks section's first page: a table of every benchmark, each linking to its own page."""
    lines = [
        "# Benchmarks",
        "",
        "Every benchmark kaoshi can load, as `kaoshi benchmarks` lists them. This page and the one of each",
        "benchmark are written from the benchmark registry (`kaoshi.list_benchmarks()`) when the site is",
        "built, so they say what the code does. A benchmark another installed package adds (the",
        "`kaoshi.benchmarks` entry-point group) gets its page the same way.",
        "",
        "| Benchmark | What it is | Size, as published | Official count checked | Default prompt |",
        "|:---|:---|:---|:---|:---|",
    ]
    for info in listed:
        checked = info.published.official_count if info.published is not None else NONE
        lines.append(
            f"| [{markdown_cell(info.name)}]({info.name}.md) | {markdown_cell(info.description)}"
            f" | {markdown_cell(info.size or NONE)} | {markdown_cell(checked)}"
            f" | {code_span(info.default_prompt)} |"
        )
    lines += [
        "",
        "Run one with `kaoshi run --benchmark NAME --data PATH --model MODEL` (a benchmark with a hub id",
        "loads without `--data`); `kaoshi benchmarks --format json` gives the same facts to a program.",
        "",
    ]
    return "\n".join(lines)


def benchmark_page(info: BenchmarkInfo) -> str:
    """One benchmark's page: its facts, the check against its published repository, what it reports and
    the notes its module gives."""
    benchmark = get_benchmark(info.name)
    lines = [f"# {markdown_text(info.name)}", "", markdown_text(info.description), ""]
    lines += _facts(info, benchmark)
    lines += _published(info.published)
    lines += _reports(benchmark)
    lines += _notes(info.name)
    return "\n".join(lines)


def _facts(info: BenchmarkInfo, benchmark: Benchmark) -> list[str]:
    rows = [
        ("Choose it with", code_span(f"--benchmark {info.name}")),
        ("`--data` takes", markdown_cell(info.formats or NONE)),
        ("Hugging Face hub", _hub(info.hub_id)),
        ("Found from `--data` alone", "yes" if info.detected else f"no: give `--benchmark {info.name}`"),
        ("Splits", ", ".join(code_span(split) for split in info.splits) or NONE),
        ("Size, as published", markdown_cell(info.size or NONE)),
        ("Licence", markdown_cell(info.licence or NONE)),
        ("Subjects or domains with a category", str(info.subjects) if info.subjects else NONE),
        ("Default prompt", _template_text(info.default_prompt)),
        ("Its own prompts", ", ".join(code_span(t.name) for t in benchmark.templates) or NONE),
        ("Exports", _exports(benchmark)),
    ]
    return [*_two_column_table(rows), ""]


def _two_column_table(rows: Sequence[tuple[str, str]]) -> list[str]:
    """Labels and values, the first pair as the table's header (a table has one)."""
    (label, value), *rest = rows
    return [f"| {label} | {value} |", "|:---|:---|", *(f"| {label} | {value} |" for label, value in rest)]


def _hub(hub_id: str | None) -> str:
    if hub_id is None:
        return NONE
    return f"{code_span(hub_id)}, read without `--data` (`pip install 'kaoshi[hub]'`)"


def _template_text(name: str) -> str:
    """A template's name with its default shots and generation budget."""
    try:
        template = get_template(name)
    except UnknownName:
        return code_span(name)
    return f"{code_span(name)} ({template.default_shots}-shot, {template.budget.describe()} new tokens)"


def _exports(benchmark: Benchmark) -> str:
    if not benchmark.exporters:
        return NONE
    return "<br>".join(
        f"{code_span(f'kaoshi export {e.name}')}: {markdown_cell(e.description)}" for e in benchmark.exporters
    )


def _published(check: PublishedCheck | None) -> list[str]:
    lines = ["## Checked against the published data", ""]
    if check is None:
        return [*lines, "Not checked against a published repository.", ""]
    repository = f"https://github.com/{check.repository}"
    rows = [
        ("Repository", f"[{markdown_cell(check.repository)}]({repository}) at {code_span(check.commit)}"),
        ("Official count", markdown_cell(check.official_count)),
        ("What kaoshi loads from those files", markdown_cell(check.loaded)),
        ("Prompt parity", markdown_cell(check.prompt_parity)),
        ("Score parity", markdown_cell(check.score_parity)),
    ]
    lines += _two_column_table(rows)
    lines += [
        "",
        "`KAOSHI_REALDATA=<folder of those repositories> pytest tests/realdata` runs these checks again.",
        "",
    ]
    return lines


def _reports(benchmark: Benchmark) -> list[str]:
    lines = [
        "## What kaoshi reports",
        "",
        "Like every exam: accuracy over the checked questions with its 95% interval, overall and by domain,",
        "type, subject, category or group (`kaoshi report RUN --by ...`), and points where the questions",
        "have them.",
        "",
    ]
    if benchmark.metrics:
        lines += ["Its own numbers, beside those:", ""]
        lines += [f"- {markdown_text(metric.label)}" for metric in benchmark.metrics]
        lines.append("")
    layout = benchmark.leaderboard
    text = (
        f"Its leaderboard (`kaoshi leaderboard --benchmark {benchmark.name}`) ranks runs by the column"
        f" {code_span(layout.headline)}"
    )
    if layout.note:
        text += f"; under the table: {markdown_text(layout.note)}."
    elif isinstance(layout, DomainLayout):
        text += ", beside a column per domain and their macro mean."
    else:
        text += "."
    return [*lines, text, ""]


def _notes(name: str) -> list[str]:
    module = defining_module(name)
    doc = inspect.getdoc(importlib.import_module(module)) if module is not None else None
    if not doc:
        return []
    return ["## Notes", "", f"From the docstring of `{module}`:", "", markdown_text(doc), ""]


def defining_module(name: str) -> str | None:
    """The module that defines a benchmark kaoshi ships or an installed package adds; None for one
    registered at run time."""
    target = BUILTIN_BENCHMARKS.get(name)
    if target is not None:
        return target.partition(":")[0]
    entry = plugin_benchmarks().get(name)
    return entry.module if entry is not None else None
