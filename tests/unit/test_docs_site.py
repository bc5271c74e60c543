"""The documentation site: the pages written from the code (benchmark pages from the registry, the
command-line reference from the parser) say what the code does, and `mkdocs build --strict` builds it,
offline, failing on a broken link or a page left out."""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaoshi.api.benchmark_pages import INDEX_PAGE, benchmark_page_path, benchmark_pages
from kaoshi.api.catalog import list_benchmarks
from kaoshi.benchmarks import Benchmark, unregister_benchmark
from kaoshi.cli.main import COMMANDS, build_parser
from kaoshi.cli.reference import REFERENCE_PAGE, cli_reference, commands
from kaoshi.report.markdown_text import code_span, markdown_cell, markdown_text
from tests.support import toy_benchmark

ROOT = Path(__file__).resolve().parents[2]


# -- benchmark pages -----------------------------------------------------------------------------------
def test_every_benchmark_has_a_page_with_what_was_checked() -> None:
    pages = benchmark_pages()
    listed = list_benchmarks()
    assert list(pages) == [INDEX_PAGE, *(benchmark_page_path(info.name) for info in listed)]
    for info in listed:
        page = pages[benchmark_page_path(info.name)]
        assert page.startswith(f"# {markdown_text(info.name)}\n")
        assert markdown_cell(info.description) in page
        assert f"({info.name}.md)" in pages[INDEX_PAGE]
        if info.published is None:
            assert "Not checked against a published repository." in page
        else:
            assert markdown_cell(info.published.official_count) in page
            assert info.published.commit in page
            assert markdown_cell(info.published.prompt_parity) in page
            assert markdown_cell(info.published.score_parity) in page


def test_a_benchmark_page_says_what_its_runs_report() -> None:
    pages = benchmark_pages()
    ceval = pages[benchmark_page_path("ceval")]
    assert "`kaoshi export ceval-submission`" in ceval
    assert "`ceval-answer-only` (5-shot" in ceval and "`ceval-cot`" in ceval
    assert "- category averages" in ceval
    assert "From the docstring of `kaoshi.benchmarks.ceval.benchmark`" in ceval
    gaokao = pages[benchmark_page_path("gaokao-bench")]
    assert "- 理科总分" in gaokao and "ranks runs by the column `得分率`" in gaokao


@pytest.fixture
def toy() -> Iterator[Benchmark]:
    yield toy_benchmark.register()
    unregister_benchmark(toy_benchmark.NAME)


def test_a_registered_benchmark_gets_its_page(toy: Benchmark) -> None:
    pages = benchmark_pages()
    page = pages[benchmark_page_path("toy")]
    assert "a toy benchmark: two subjects of easy questions" in page
    assert "`kaoshi export toy-answers`: id and answer per line" in page
    assert "ranks runs by the column `subject mean`; under the table: toy: one column per subject." in page
    assert "[toy](toy.md)" in pages[INDEX_PAGE]


# -- the command-line reference ------------------------------------------------------------------------
def sections(page: str) -> dict[str, str]:
    """The reference's sections by command (`kaoshi run`, `kaoshi runs rm`)."""
    found = {}
    for part in page.split("\n#")[1:]:
        heading, _, body = part.partition("\n")
        if "{#" in heading:
            found[heading.lstrip("# ").split(" {#")[0]] = body
    return found


def test_the_cli_reference_has_every_command_and_its_options() -> None:
    page = cli_reference()
    found = sections(page)
    assert [name for name in found if name.count(" ") == 1] == [f"kaoshi {name}" for name in COMMANDS]
    assert {"kaoshi runs rm", "kaoshi runs mv", "kaoshi store backup", "kaoshi exam shuffle"} <= set(found)
    run = found["kaoshi run"]
    assert "| `--model` `MODEL` |  | the backend, NAME\\[:ARG\\]" in run
    assert "| `--batch` |" in run and "| `--batch-size` `BATCH_SIZE` |" in run
    assert "| `--method` `METHOD` | `generate` | one of `generate`, `loglik` |" in run
    assert "usage: kaoshi run [-h]" in run
    assert "| `--chat`, `--no-chat` |  | send chat messages" in run
    assert "[kaoshi run](#kaoshi-run)" in page
    for command in commands():
        section = found[command.name]
        for action in command.parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
                continue
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in section, (command.name, option)


def test_the_reference_walks_the_parser_it_is_given() -> None:
    parser = argparse.ArgumentParser(prog="tool")
    sub = parser.add_subparsers()
    one = sub.add_parser("one", help="do one thing, 100%% of it")
    one.add_argument("path", nargs="+", help="files")
    one.add_argument("--mode", choices=("a", "b"), default="a", help="how (default: %(default)s)")
    one.add_argument("--flag", action="store_true", help="a *flag* with <html>")
    one.add_argument("--hidden", help=argparse.SUPPRESS)
    page = cli_reference(parser)
    assert "## tool one {#tool-one}" in page
    assert "do one thing, 100% of it" in page
    assert "| `path [path ...]` |  | files |" in page
    assert "| `--mode` `MODE` | `a` | how (default: a) (one of `a`, `b`) |" in page
    assert "| `--flag` |  | a \\*flag\\* with &lt;html&gt; |" in page
    assert "--hidden" not in page.split("```")[-1]  # listed in no table
    assert REFERENCE_PAGE == "reference/cli.md"


def test_the_real_parser_is_walked_in_full() -> None:
    found = {command.name for command in commands()}
    assert found >= {f"kaoshi {name}" for name in COMMANDS}
    assert len(build_parser()._actions) == len(commands()[0].parser._actions)


@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        ("plain words", "plain words"),
        ("a*b_c [x] |y|", "a\\*b\\_c \\[x\\] \\|y\\|"),
        ("<exam>-<split> & more", "&lt;exam&gt;-&lt;split&gt; &amp; more"),
        ("keep `a_b|c*` as code", "keep `a_b|c*` as code"),
        ("two ``x ` y`` spans `z_`", "two ``x ` y`` spans `z_`"),
        ("an unclosed ` tick_", "an unclosed ` tick\\_"),
    ],
)
def test_markdown_text(text: str, markdown: str) -> None:
    assert markdown_text(text) == markdown


def test_code_span_and_cell() -> None:
    assert code_span("a`b") == "``a`b``"
    assert code_span("`x") == "`` `x ``"
    assert markdown_cell("one\n  two") == "one two"


# -- the site ------------------------------------------------------------------------------------------
def needs_mkdocs() -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            pytest.skip(f"the docs extra is not installed: pip install -e '.[docs]' ({module} is missing)")


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )


@pytest.mark.slow
def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    needs_mkdocs()
    site = tmp_path / "site"
    done = mkdocs_build(ROOT / "mkdocs.yml", site)
    assert done.returncode == 0, done.stderr
    for page in (
        "reference/cli",
        "reference/api",
        "benchmarks",
        *(f"benchmarks/{b.name}" for b in list_benchmarks()),
    ):
        assert (site / page / "index.html").exists(), page
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="kaoshi.evaluate"' in api and 'id="kaoshi.results.metric.CategoryMeans"' in api
    assert not (site / "hooks.py").exists()
    assert "fonts.googleapis" not in (site / "index.html").read_text(encoding="utf-8")  # offline


@pytest.mark.slow
def test_a_broken_link_or_a_page_left_out_fails_the_build(tmp_path: Path) -> None:
    """The site's own validation settings, on a site with one broken link and one page not in the nav."""
    needs_mkdocs()
    import yaml

    settings = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](missing.md), [anchor](#nowhere)\n", encoding="utf-8")
    (docs / "stray.md").write_text("# Stray\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    small = {
        "site_name": "t",
        "docs_dir": str(docs),
        "theme": settings["theme"],
        "markdown_extensions": settings["markdown_extensions"],
        "validation": settings["validation"],
        "nav": [{"Home": "index.md"}],
    }
    config.write_text(yaml.safe_dump(small), encoding="utf-8")
    done = mkdocs_build(config, tmp_path / "site")
    assert done.returncode != 0
    warnings = [record for record in log_records(done.stderr) if record.startswith("WARNING")]
    for problem in ("missing.md", "#nowhere", "stray.md"):
        assert any(problem in warning for warning in warnings), done.stderr


def log_records(log: str) -> list[str]:
    """MkDocs' log as records, each with the indented lines that continue it."""
    records: list[str] = []
    for line in log.splitlines():
        if records and (line.startswith(" ") or not line.strip()):
            records[-1] += "\n" + line
        else:
            records.append(line)
    return records


def test_the_hooks_add_the_generated_pages_and_refuse_a_committed_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """docs/hooks.py, as MkDocs runs it: the benchmark pages join the nav, the generated pages join the
    files, and a committed file at a generated page's path is replaced with a warning (strict: an error)."""
    needs_mkdocs()
    from mkdocs.config import load_config
    from mkdocs.structure.files import File, Files

    config = load_config(str(ROOT / "mkdocs.yml"))
    config = config.plugins.on_config(config)
    sections = [
        entry["Benchmarks"] for entry in config.nav or [] if isinstance(entry, dict) and "Benchmarks" in entry
    ]
    assert sections == [[INDEX_PAGE, *(benchmark_page_path(info.name) for info in list_benchmarks())]]
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / INDEX_PAGE).write_text("# written by hand\n", encoding="utf-8")
    committed = File(
        INDEX_PAGE, src_dir=str(tmp_path), dest_dir=str(tmp_path / "site"), use_directory_urls=True
    )
    files = config.plugins.on_files(Files([committed]), config=config)
    index = files.get_file_from_path(INDEX_PAGE)
    assert index is not None and "written by hand" not in index.content_string
    assert files.get_file_from_path(REFERENCE_PAGE) is not None
    assert files.get_file_from_path(benchmark_page_path("ceval")) is not None
    assert any("benchmarks/index.md is written from the code" in r.getMessage() for r in caplog.records)
