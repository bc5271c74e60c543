"""The documentation's runnable examples: found in a Markdown page by their markers, run, and their output
checked against the page.

A page marks a fenced block runnable with an HTML comment on the line just before its opening fence:

    <!-- run -->          a ```python or ```console block the tests run
    <!-- run model -->    the same, needing the real small model (run only by the `model` tests)

A ```python block runs in one namespace per page, blocks in page order, in a fresh temporary folder per
page; what it prints (stdout) is its output. In a ```console block each line starting with `$ ` is a
command run by bash in the same folder with the repository's venv first on PATH; a line ending with `\\`
continues on the next; other lines are what the page shows and are not run. The commands' stdout and
stderr together are the block's output, and a command that exits non-zero fails the example.

A runnable block may be followed, after at most one blank line, by a ```text block with a marker of its
own on the line before its fence:

    <!-- output -->            the output must equal the text (trailing whitespace on each line and at
                               the end ignored; a line `...` stands for any number of lines)
    <!-- output contains -->   each non-empty line of the text must appear in the output

Output is what a pipe gets (COLUMNS unset: tables at their natural width).
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RUN, RUN_MODEL, OUTPUT, OUTPUT_CONTAINS = "run", "run model", "output", "output contains"
MARKERS = (RUN, RUN_MODEL, OUTPUT, OUTPUT_CONTAINS)
RUNNABLE_LANGUAGES = ("python", "console")
OUTPUT_LANGUAGE = "text"
ANY_LINES = "..."
COMMAND_TIMEOUT_S = 300

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*?)[ \t]*$")
_COMMENT = re.compile(r"^[ \t]*<!--(?P<text>.*?)-->[ \t]*$")


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: its language, its text (unindented), where it is and its marker."""

    page: str
    line: int  # the opening fence's line, from 1
    end: int  # the closing fence's line
    language: str
    text: str
    marker: str | None  # one of MARKERS, or None


@dataclass(frozen=True)
class Example:
    """A runnable block and the output block that checks it, if any."""

    block: Block
    output: Block | None = None

    @property
    def needs_model(self) -> bool:
        return self.block.marker == RUN_MODEL

    @property
    def where(self) -> str:
        return f"{self.block.page}:{self.block.line}"


@dataclass(frozen=True)
class Page:
    name: str  # as failures name it, e.g. docs/how-to/compare-runs.md
    examples: tuple[Example, ...]
    problems: tuple[str, ...] = field(default=())  # markers that would not run what they mark


def marker_of(line: str) -> str | None:
    """The marker an HTML comment line holds (inner whitespace does not matter), its text for an unknown
    comment, None for a line that is no comment."""
    match = _COMMENT.match(line)
    if match is None:
        return None
    return " ".join(match.group("text").split())


def read_page(path: Path, name: str) -> Page:
    """The page's runnable examples, and the problems of its markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, problems = _blocks(lines, name)
    examples: list[Example] = []
    by_end = {block.end: block for block in blocks}
    for block in blocks:
        if block.marker in (RUN, RUN_MODEL):
            examples.append(Example(block))
        elif block.marker in (OUTPUT, OUTPUT_CONTAINS):
            before = _block_before(block, by_end, lines)
            if before is None or not examples or examples[-1].block is not before:
                problems.append(
                    f"{name}:{block.line - 1}: <!-- {block.marker} --> does not follow a runnable block "
                    "(at most one blank line between the runnable block's closing fence and it)"
                )
            else:
                examples[-1] = Example(before, block)
    return Page(name, tuple(examples), tuple(problems))


def _block_before(output: Block, by_end: dict[int, Block], lines: Sequence[str]) -> Block | None:
    """The block whose closing fence is just before the output's marker (one blank line between them at
    most), or None."""
    marker_line = output.line - 1
    for end in (marker_line - 1, marker_line - 2):
        if end == marker_line - 2 and lines[end].strip():  # lines[end] is the page's line end + 1
            return None
        if end in by_end:
            return by_end[end]
    return None


def _blocks(lines: Sequence[str], name: str) -> tuple[list[Block], list[str]]:
    """Every fenced block with its marker, and the problems of markers outside them."""
    blocks: list[Block] = []
    problems: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        opening = _FENCE.match(line)
        if opening is None:
            problems += _loose_marker(lines, index, name)
            index += 1
            continue
        end = _closing(lines, index, opening.group("fence"))
        indent = len(opening.group("indent"))
        body = [_unindented(text, indent) for text in lines[index + 1 : end]]
        language = (opening.group("info").split() or [""])[0].lower()
        marker = marker_of(lines[index - 1]) if index > 0 else None
        line_number = index + 1
        if marker is not None and marker not in MARKERS:
            if _looks_like_a_marker(marker):
                problems.append(f"{name}:{index}: unknown marker <!-- {marker} --> (known: {_known()})")
            marker = None
        if marker in (RUN, RUN_MODEL) and language not in RUNNABLE_LANGUAGES:
            problems.append(
                f"{name}:{index}: <!-- {marker} --> marks a ```{language} block; runnable blocks are "
                + ", ".join(f"```{known}" for known in RUNNABLE_LANGUAGES)
            )
            marker = None
        if marker in (OUTPUT, OUTPUT_CONTAINS) and language != OUTPUT_LANGUAGE:
            problems.append(f"{name}:{index}: <!-- {marker} --> marks a ```{language} block, not ```text")
            marker = None
        text = "\n".join(body)
        if marker is not None and end == len(lines):
            problems.append(f"{name}:{line_number}: the block marked <!-- {marker} --> is never closed")
        if marker in (RUN, RUN_MODEL) and not _has_code(language, text):
            problems.append(f"{name}:{line_number}: the block marked <!-- {marker} --> has nothing to run")
        blocks.append(Block(name, line_number, end + 1, language, text, marker))
        index = end + 1
    return blocks, problems


def _unindented(line: str, indent: int) -> str:
    """A block's line without its fence's indentation (a block inside a list item or an admonition)."""
    return line[indent:] if not line[:indent].strip() else line.lstrip()


def _closing(lines: Sequence[str], opening: int, fence: str) -> int:
    """The index of the line closing the fence opened at `opening` (the page's end if none does)."""
    for index in range(opening + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            return index
    return len(lines)


def _loose_marker(lines: Sequence[str], index: int, name: str) -> list[str]:
    """A marker comment that is not on the line just before a fence marks nothing: an error."""
    marker = marker_of(lines[index])
    if marker is None:
        return []
    next_is_fence = index + 1 < len(lines) and _FENCE.match(lines[index + 1]) is not None
    if next_is_fence:
        return []  # checked with its block
    if marker in MARKERS:
        return [f"{name}:{index + 1}: <!-- {marker} --> is not followed by a fenced block on the next line"]
    if _looks_like_a_marker(marker):
        return [f"{name}:{index + 1}: unknown marker <!-- {marker} --> (known: {_known()})"]
    return []


def _looks_like_a_marker(text: str) -> bool:
    first = text.split()[0].lower() if text.split() else ""
    return first.startswith(("run", "out", "ouput", "outupt"))


def _known() -> str:
    return ", ".join(f"<!-- {m} -->" for m in MARKERS)


def _has_code(language: str, text: str) -> bool:
    if language == "console":
        return any(line.startswith("$ ") for line in text.splitlines())
    return bool(text.strip())


# -- running -------------------------------------------------------------------------------------------
class ExampleFailed(AssertionError):
    """An example failed: the message names the page and line."""


def run_examples(page: Page, folder: Path, *, with_model: bool) -> int:
    """Run the page's examples in order in `folder` (the current directory, which the caller sets) and
    check their output; returns how many ran. Without the model, the page stops before its first
    `<!-- run model -->` block (what follows may use what it made)."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    ran = 0
    for example in page.examples:
        if example.needs_model and not with_model:
            break
        if example.block.language == "python":
            output = run_python(example.block, namespace)
        else:
            output = run_console(example.block, folder)
        if example.output is not None:
            check_output(example, output)
        ran += 1
    return ran


def run_python(block: Block, namespace: dict[str, Any]) -> str:
    """Execute the block in `namespace`; what it printed. Tracebacks show the page's own line numbers."""
    code = compile("\n" * block.line + block.text, block.page, "exec")
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(code, namespace)
    except (Exception, SystemExit) as exc:
        raise ExampleFailed(
            f"{block.page}:{block.line}: the python example raised {type(exc).__name__}: {exc}\n"
            f"it had printed:\n{printed.getvalue()}"
        ) from exc
    return printed.getvalue()


def console_commands(block: Block) -> Iterator[tuple[int, str]]:
    """(page line, command) for each `$ ` line of a console block, its continuation lines joined."""
    lines = block.text.splitlines()
    index = 0
    while index < len(lines):
        if not lines[index].startswith("$ "):
            index += 1
            continue
        start = index
        command = [lines[index][2:]]
        while command[-1].endswith("\\") and index + 1 < len(lines):
            index += 1
            command.append(lines[index])
        yield block.line + 1 + start, "\n".join(command)
        index += 1


def run_console(block: Block, folder: Path) -> str:
    """Run the block's commands with bash in `folder`; their stdout and stderr, in order."""
    output = []
    for line, command in console_commands(block):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=folder,
            env=example_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        output.append(done.stdout)
        if done.returncode != 0:
            raise ExampleFailed(
                f"{block.page}:{line}: `{command}` exited with {done.returncode}:\n{done.stdout}"
            )
    return "".join(output)


def example_environment() -> dict[str, str]:
    """The commands' environment: this one, the venv's bin first on PATH (so `kaoshi` is this checkout's),
    no store chosen by the environment, and output laid out as for a pipe."""
    unset = ("KAOSHI_STORE", "COLUMNS", "LINES", "FORCE_COLOR")
    env = {name: value for name, value in os.environ.items() if name not in unset}
    env["PATH"] = os.pathsep.join([str(venv_bin()), env.get("PATH", "")])
    return env


def venv_bin() -> Path:
    """The folder of the running Python's scripts (the repository's .venv/bin under `make test`)."""
    return Path(sys.executable).parent


# -- output --------------------------------------------------------------------------------------------
def normalized(text: str) -> list[str]:
    """Lines without trailing whitespace, without trailing empty lines."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_matches(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Equal line by line, a line `...` in `expected` standing for any number of lines (none too)."""
    # reachable[j]: expected[:i] can match actual[:j]
    reachable = [True] + [False] * len(actual)
    for line in expected:
        if line.strip() == ANY_LINES:
            for j in range(1, len(actual) + 1):
                reachable[j] = reachable[j] or reachable[j - 1]
        else:
            reachable = [False] + [reachable[j] and actual[j] == line for j in range(len(actual))]
    return reachable[len(actual)]


def missing_lines(expected: Sequence[str], actual: str) -> list[str]:
    """The non-empty lines of `expected` that do not appear in the output."""
    shown = "\n".join(normalized(actual))
    return [line for line in expected if line.strip() and line.rstrip() not in shown]


def check_output(example: Example, output: str) -> None:
    """Raise ExampleFailed where the output is not what the page's output block shows."""
    assert example.output is not None
    expected = normalized(example.output.text)
    if example.output.marker == OUTPUT_CONTAINS:
        missing = missing_lines(expected, output)
        if missing:
            raise ExampleFailed(
                f"{example.where}: the output lacks these lines of the <!-- output contains --> block at"
                f" line {example.output.line}:\n" + "\n".join(missing) + f"\n--- the output:\n{output}"
            )
        return
    actual = normalized(output)
    if not output_matches(expected, actual):
        diff = difflib.unified_diff(expected, actual, "the page shows", "the example printed", lineterm="")
        raise ExampleFailed(
            f"{example.where}: the output differs from the <!-- output --> block at line"
            f" {example.output.line}:\n" + "\n".join(diff)
        )
