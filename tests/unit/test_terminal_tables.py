"""Tables fit the terminal: columns of lowest priority are left out (and named), prose wraps in its cells,
labels and numbers never break, and no line is wider than the terminal (issue 30, point 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.cells import cell_len

from kaoshi.cli.main import main
from kaoshi.report.tables import PIPE_WIDTH, TextTable, output_width, render_tables
from tests.support.runs import cli

LONG_RUN = "qwen2.5-7b-instruct-ceval-val-5shot-generate-limit30"
PROSE = "a description long enough that it has to wrap in any terminal narrower than a very wide one " * 2

TABLE = TextTable(
    "runs",
    ("run", "what it is", "n", "accuracy", "created"),
    [[LONG_RUN, PROSE, "1340", "55.1%", "2026-11-27T10:00:00"], ["short", "x", "12", "50.0%", "2026-11-27"]],
    best=frozenset({(0, 3)}),
    priority=(20, 5, 10, 15, 1),
    wrap=frozenset({1}),
)


def widths(text: str) -> list[int]:
    return [cell_len(line) for line in text.splitlines()]


@pytest.mark.parametrize("width", [67, 72, 80, 100, 120, 160, 240])
def test_no_line_is_wider_than_the_terminal_and_the_run_name_stays_whole(width: int) -> None:
    text = render_tables([TABLE], "table", width=width)
    assert max(widths(text)) <= width
    assert LONG_RUN in text  # on one line: it can be copied
    assert "55.1% *" in text  # the best mark follows its column


@pytest.mark.parametrize(
    ("width", "left_out"),
    [
        # natural: 289 columns; with the prose wrapped at 20: 119; without `created`: 97; without the
        # prose too: 74; without `n` too: 67
        (400, []),
        (120, []),  # the prose wraps before any column is left out
        (100, ["created"]),
        (80, ["what it is", "created"]),
        (70, ["what it is", "n", "created"]),
    ],
)
def test_columns_are_left_out_lowest_priority_first_and_named(width: int, left_out: list[str]) -> None:
    text = render_tables([TABLE], "table", width=width)
    header = next(line for line in text.splitlines() if "run" in line and "┃" in line)
    shown = [cell.strip() for cell in header.strip("┃").split("┃")]
    assert shown == [h for h in TABLE.headers if h not in left_out]
    if left_out:
        assert f"left out to fit {width} columns: {', '.join(left_out)}" in " ".join(text.split())
    else:
        assert "left out" not in text


def test_prose_wraps_inside_its_cell_numbers_do_not() -> None:
    text = render_tables([TABLE], "table", width=100)
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert len(rows) > 2  # the description took several lines
    assert sum("1340" in line for line in rows) == 1
    assert sum("2026-11-27T10:00:00" in line for line in rows) <= 1


def test_a_table_whose_narrowest_form_is_too_wide_folds_every_cell() -> None:
    text = render_tables([TABLE], "table", width=40)
    assert max(widths(text)) <= 40
    assert LONG_RUN not in text and LONG_RUN.replace("-", "") not in text  # folded, nothing lost:
    assert "".join(line.strip("│ ").split(" ")[0] for line in text.splitlines() if LONG_RUN[:10] in line)


def test_the_width_comes_from_columns_then_the_terminal_and_a_pipe_has_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "87")
    assert output_width() == 87
    monkeypatch.delenv("COLUMNS")
    assert output_width() is None  # pytest captures stdout: not a terminal
    text = render_tables([TABLE], "table")
    assert max(widths(text)) <= PIPE_WIDTH and "left out" not in text


def test_machine_formats_keep_every_column() -> None:
    md = render_tables([TABLE], "md", width=40)
    assert "| run | what it is | n | accuracy | created |" in md


def test_priorities_must_match_the_columns() -> None:
    broken = TextTable("t", ("a", "b"), [["1", "2"]], priority=(1,))
    with pytest.raises(ValueError, match="1 priorities for 2 columns"):
        render_tables([broken], "table", width=80)


@pytest.mark.parametrize("command", [["benchmarks"], ["runs"], ["leaderboard"], ["report"]])
def test_the_newcomers_commands_fit_a_100_column_terminal(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite"
    cli(capsys, "run", "--benchmark", "sample", "--model", "random", "--limit", "3", "--store", str(store))
    capsys.readouterr()
    (run,) = (
        row["run"] for row in json.loads(cli(capsys, "runs", "--format", "json", "--store", str(store)))
    )
    monkeypatch.setenv("COLUMNS", "100")
    args = command if command == ["benchmarks"] else [*command, "--store", str(store)]
    assert main([*args, run] if command == ["report"] else args) == 0
    out = capsys.readouterr().out
    assert out.strip() and max(widths(out)) <= 100
    if command == ["runs"]:
        assert any(run in line for line in out.splitlines())  # whole, on one line


def test_a_cell_with_brackets_shows_as_it_is() -> None:
    """Cells, headers, titles and notes are text, never rich markup: `kaoshi[api]` keeps its `[api]`, a
    model's answer `[A]` and a `[bold]` in a reply show as written."""
    table = TextTable(
        "runs [of the day]",
        ("[run]", "install"),
        [["[A]", "pip install 'kaoshi[api]'"], ["[bold]x[/bold]", "y"]],
        note="see [docs]",
    )
    shown = render_tables([table], "table")
    for text in (
        "runs [of the day]",
        "[run]",
        "[A]",
        "pip install 'kaoshi[api]'",
        "[bold]x[/bold]",
        "see [docs]",
    ):
        assert text in shown, text


def test_kaoshi_samples_shows_a_reply_with_brackets_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import kaoshi

    monkeypatch.setenv("COLUMNS", "240")
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate(
        "sample", lambda prompt: "答案：[A] [bold]x[/bold]", store=store, run_name="t [x]", limit_total=2
    )
    shown = cli(capsys, "samples", "t [x]", "--store", str(store))
    assert "t [x]: 2 sample(s)" in shown
    assert "答案：[A] [bold]x[/bold]" in shown
