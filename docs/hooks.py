"""MkDocs hooks (mkdocs.yml `hooks:`): the pages written from the code each time the site is built, never
committed, so they cannot disagree with it:

- reference/cli.md, from kaoshi's own argument parser (kaoshi.cli.reference);
- benchmarks/index.md and benchmarks/<name>.md for every benchmark `kaoshi.list_benchmarks()` returns
  (kaoshi.api.benchmark_pages), each added to the nav's Benchmarks section after its index.
"""

from __future__ import annotations

import logging
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from kaoshi.api.benchmark_pages import benchmark_page_path, benchmark_pages
from kaoshi.api.catalog import list_benchmarks
from kaoshi.cli.reference import REFERENCE_PAGE, cli_reference

log = logging.getLogger("mkdocs.hooks.kaoshi")
BENCHMARKS_SECTION = "Benchmarks"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """A nav entry per benchmark, after the Benchmarks section's index, in `kaoshi benchmarks` order."""
    section = _benchmarks_section(config.nav or [])
    if section is None:
        log.warning(
            "mkdocs.yml: the nav has no %r section for the generated benchmark pages", BENCHMARKS_SECTION
        )
        return config
    listed = [benchmark_page_path(info.name) for info in list_benchmarks()]
    section[:] = [entry for entry in section if entry not in listed] + listed
    return config


def _benchmarks_section(nav: list[Any]) -> list[Any] | None:
    for entry in nav:
        if isinstance(entry, dict) and isinstance(entry.get(BENCHMARKS_SECTION), list):
            found: list[Any] = entry[BENCHMARKS_SECTION]
            return found
    return None


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages; a file committed at one of their paths is an error (it would hide them)."""
    pages = {REFERENCE_PAGE: cli_reference(), **benchmark_pages()}
    for path, content in pages.items():
        committed = files.get_file_from_path(path)
        if committed is not None:
            log.warning(
                "docs/%s is written from the code when the site is built: remove the committed file", path
            )
            files.remove(committed)
        files.append(File.generated(config, path, content=content))
    return files
