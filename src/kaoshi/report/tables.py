"""Plain tables of strings and their renderings: terminal, Markdown, CSV (long form) and LaTeX."""

from __future__ import annotations

import csv
import io
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from rich.cells import cell_len

from kaoshi.errors import InputError

if TYPE_CHECKING:  # rich's tables are imported where a table is drawn by rich (_drawn_by_rich)
    from rich.table import Table

TEXT_FORMATS = ("table", "md", "csv", "latex")
BEST_MARK = "*"


@dataclass(frozen=True)
class TextTable:
    """A titled table; `best` holds the (row, column) cells marked as the best in their row."""

    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    best: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    note: str = ""
    best_in: str = "row"  # what the marked cells are best in: "row" or "column"
    # How long each column stays when the table must be narrowed to fit a terminal: higher stays longer.
    # Empty: the first column (the row labels) stays longest, then the others from left to right.
    priority: Sequence[int] = ()
    # Columns of prose (a description, a size in words) whose text may wrap inside its cells; every other
    # column keeps its natural width, so numbers and run names are never broken.
    wrap: frozenset[int] = frozenset()

    def column_priority(self) -> list[int]:
        if self.priority:
            if len(self.priority) != len(self.headers):
                raise ValueError(
                    f"{self.title}: {len(self.priority)} priorities for {len(self.headers)} columns"
                )
            return list(self.priority)
        return [len(self.headers) + 1, *range(len(self.headers) - 1, 0, -1)]

    def without_columns(self, left_out: set[int]) -> TextTable:
        """The table without the columns at `left_out`; marks and priorities follow their columns."""
        kept = [c for c in range(len(self.headers)) if c not in left_out]
        position = {c: i for i, c in enumerate(kept)}
        return replace(
            self,
            headers=[self.headers[c] for c in kept],
            rows=[[row[c] for c in kept] for row in self.rows],
            best=frozenset((r, position[c]) for r, c in self.best if c in position),
            priority=[self.column_priority()[c] for c in kept],
            wrap=frozenset(position[c] for c in self.wrap if c in position),
        )

    def natural_widths(self) -> list[int]:
        """Each column's width in terminal cells when nothing wraps (a marked cell with its mark)."""
        widths = [cell_len(h) for h in self.headers]
        for r, row in enumerate(self.rows):
            for c in range(len(row)):
                shown = _cell(self, r, c, _MARKED)
                widths[c] = max(widths[c], max((cell_len(line) for line in shown.split("\n")), default=0))
        return widths

    def needed_width(self) -> int:
        """The narrowest this table is laid out in: prose columns wrapped at WRAP_WIDTH, the rest whole,
        plus the borders and padding rich draws (one border and two spaces per column, one more border)."""
        widths = self.natural_widths()
        return drawn_width([min(w, WRAP_WIDTH) if c in self.wrap else w for c, w in enumerate(widths)])

    def reads_left(self, c: int) -> bool:
        """Whether column `c` is prose, justified to the left (the first column, and those that wrap)."""
        return c == 0 or c in self.wrap

    def legend(self, mark: str) -> str:
        """The note, preceded by what `mark` means when cells are marked."""
        parts = [f"{mark} best in {self.best_in}"] if self.best else []
        return "; ".join([*parts, self.note] if self.note else parts)


def mark_best(rows: Sequence[Sequence[float | None]], lower_is_better: bool = False) -> set[tuple[int, int]]:
    """The cells holding each row's best value (ties all marked); rows with fewer than two values get none.

    `rows` are the numeric values behind the table's cells, already offset to the table's columns.
    """
    marked: set[tuple[int, int]] = set()
    for r, values in enumerate(rows):
        present = [v for v in values if v is not None]
        if len(present) < 2 or len(set(present)) == 1:
            continue
        best = min(present) if lower_is_better else max(present)
        marked.update((r, c) for c, v in enumerate(values) if v is not None and v == best)
    return marked


def render_tables(tables: Sequence[TextTable], fmt: str, width: int | None = None) -> str:
    """The tables in a text format. For "table", `width` is the terminal's width in columns (default:
    `output_width()`)."""
    if fmt == "table":
        return _terminal(tables, output_width() if width is None else width)
    if fmt == "md":
        return "\n\n".join(_markdown(t) for t in tables)
    if fmt == "csv":
        return _csv(tables)
    if fmt == "latex":
        return "\n\n".join(_latex(t) for t in tables)
    raise InputError(f"unknown format {fmt!r} (choose from {', '.join((*TEXT_FORMATS, 'json'))})")


# A marked cell in a terminal's table: its text and the mark.
_MARKED = "{} " + BEST_MARK


def drawn_width(widths: Sequence[int]) -> int:
    """How wide a table of columns `widths` is drawn: a space either side of each cell, a line between
    cells and at either end."""
    return sum(widths) + 3 * len(widths) + 1


def _cell(table: TextTable, r: int, c: int, marked: str) -> str:
    text = table.rows[r][c]
    return marked.format(text) if (r, c) in table.best else text


def output_width() -> int | None:
    """The width tables are fitted to: COLUMNS where it is set (the convention rich and the shells
    follow), else the terminal's width when standard output is one; None for a pipe or a file (laid out
    in up to PIPE_WIDTH columns)."""
    given = os.environ.get("COLUMNS", "").strip()
    if given.isdecimal() and int(given) > 0:
        return int(given)
    if sys.stdout.isatty():
        return os.get_terminal_size(sys.stdout.fileno()).columns
    return None


WRAP_WIDTH = 20  # a prose column is wrapped no narrower than this when the table must fit a terminal
# A pipe or a file has no width: tables keep their natural width up to this, wrapping prose beyond it
# (a description cell of 500 characters would otherwise make every line of its table 2,000 wide).
PIPE_WIDTH = 240
_NARROWEST_COLUMNS = 2  # the row labels and one value stay, folded in their cells if they must


def _terminal(tables: Sequence[TextTable], width: int | None) -> str:
    """The tables laid out in `width` columns: a table wider than that leaves out its columns of lowest
    priority, saying which, until its prose columns can wrap to fit; numbers and labels never wrap, so no
    row breaks into a jumble of lines. Only a table whose two most important columns are still too wide
    folds its cells."""
    limit = PIPE_WIDTH if width is None else width
    return "".join(_drawn(table, limit) for table in tables).rstrip("\n")


def _drawn(table: TextTable, width: int) -> str:
    """The table fitted to `width` columns as rich draws it (_drawn_by_rich): drawn whole where what it
    shows fits as it is, its left-out columns named in its note (_shown), else by rich."""
    shown, left_out = _shown(table, width)
    return _drawn_whole(shown, width, _left_out_note(table, left_out, width)) or _drawn_by_rich(table, width)


def _drawn_by_rich(table: TextTable, width: int) -> str:
    """The table fitted to `width` columns and drawn by rich, as text (each line ending in a newline)."""
    from rich.console import Console  # here: most tables are drawn whole without it (_drawn_whole)

    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=False)
    console.print(_fitted(table, width))
    return console.export_text()


# rich's box for these tables (rich.box.HEAVY_HEAD): the top, the line under the header and the bottom,
# each as (left end, line, divider, right end), and the sides and dividers of the header and of the rows
_TOP = ("┏", "━", "┳", "┓")
_UNDER_HEAD = ("┡", "━", "╇", "┩")
_BOTTOM = ("└", "─", "┴", "┘")
_HEAD_SIDE, _ROW_SIDE = "┃", "│"


def _drawn_whole(t: TextTable, width: int, extra_note: str = "") -> str | None:
    """The table as rich draws it (_drawn_by_rich) where it fits in `width` columns as it is: every cell on
    one line at its natural width, the title and the note (with `extra_note` after it, as _rich_table
    adds it) broken between words to the table's width, and every text printable without spaces at its
    ends; None where rich would wrap or fold a cell or fold a word (it draws those). A table that leaves out
    columns to fit is given here as what it shows (_drawn). Drawn without rich, whose import and layout
    were a third of the time of a report of a stored run."""
    t.column_priority()  # mismatched priorities are refused, whether or not the table would need them
    if os.name == "nt":  # a legacy Windows console gets lighter lines from rich (box.SQUARE): rich draws it
        return None
    caption = "; ".join(n for n in (t.legend(BEST_MARK), extra_note) if n)
    rows = [[_cell(t, r, c, _MARKED) for c in range(len(row))] for r, row in enumerate(t.rows)]
    lines = [list(t.headers), *rows]
    texts = [t.title, caption, *(text for line in lines for text in line)]
    if not t.headers or any(len(row) != len(t.headers) for row in rows) or not all(map(_whole, texts)):
        return None
    widths = [max(cell_len(line[c]) for line in lines) for c in range(len(t.headers))]
    if any(not w and any(line[c] for line in lines) for c, w in enumerate(widths)):
        return None  # a column holding only zero-width characters (a lone accent): rich leaves it empty
    table_width = drawn_width(widths)
    title = _broken(t.title, table_width)
    note = _broken(caption, table_width)
    if table_width > width or title is None or note is None:
        return None
    left = [t.reads_left(c) for c in range(len(widths))]

    def row(cells: Sequence[str], side: str) -> str:
        justified = (
            text + " " * (w - cell_len(text)) if leftward else " " * (w - cell_len(text)) + text
            for text, w, leftward in zip(cells, widths, left, strict=True)
        )
        return side + side.join(f" {text} " for text in justified) + side

    def border(start: str, line: str, divider: str, end: str) -> str:
        return start + divider.join(line * (w + 2) for w in widths) + end

    drawn = [
        *title,
        border(*_TOP),
        row(t.headers, _HEAD_SIDE),
        border(*_UNDER_HEAD),
        *(row(cells, _ROW_SIDE) for cells in rows),
        border(*_BOTTOM),
        *note,
    ]
    return "".join(f"{line}\n" for line in drawn)


_WORD = re.compile(r"\s*\S+\s*")  # a word and the spaces after it, as rich breaks text (rich._wrap)


def _broken(text: str, width: int) -> list[str] | None:
    """`text` in lines of `width` cells as rich breaks a title or a note: after the last word that fits,
    each line without the spaces at its end and padded to the width ([] for no text); None where a word is
    wider than a line (rich folds it)."""
    starts = [0]
    used = 0  # cells of the current line
    for word in _WORD.finditer(text):
        length = cell_len(word.group().rstrip())
        if length > width:
            return None
        if used and used + length > width:
            starts.append(word.start())
            used = 0
        used += cell_len(word.group())
    lines = (
        [text[a:b].rstrip() for a, b in zip(starts, [*starts[1:], len(text)], strict=True)] if text else []
    )
    return [line + " " * (width - cell_len(line)) for line in lines]


def _whole(text: str) -> bool:
    """Whether rich draws `text` as it is where it fits: no tab, newline or other control character (rich
    expands, breaks or drops those), and no space at either end (a right-justified cell loses its
    trailing ones)."""
    return text.isprintable() and text == text.strip()


def _fitted(table: TextTable, width: int) -> Table:
    shown, left_out = _shown(table, width)
    folds = shown.needed_width() > width  # even the narrowest form is too wide: every column may fold
    return _rich_table(shown, _left_out_note(table, left_out, width), fold_all=folds)


def _shown(table: TextTable, width: int) -> tuple[TextTable, set[int]]:
    """What of the table is shown in `width` columns, and which columns it leaves out: those of lowest
    priority, rightmost first, until it fits or only its narrowest form is left."""
    priority = table.column_priority()
    order = sorted(range(len(priority)), key=lambda c: (priority[c], -c))  # lowest first, rightmost first
    left_out: set[int] = set()
    shown = table
    for column in order:
        if shown.needed_width() <= width or len(table.headers) - len(left_out) <= _NARROWEST_COLUMNS:
            break
        left_out.add(column)
        shown = table.without_columns(left_out)
    return shown, left_out


def _left_out_note(table: TextTable, left_out: set[int], width: int) -> str:
    if not left_out:
        return ""
    names = ", ".join(table.headers[c] for c in sorted(left_out))
    return f"left out to fit {width} columns: {names} (--format md or json shows every column)"


def _rich_table(t: TextTable, extra_note: str = "", fold_all: bool = False) -> Table:
    # Every text is given as rich Text, never read as markup: a cell such as `pip install 'kaoshi[api]'` or
    # a model's answer `[A]` shows as it is (as a string, rich took `[api]` for a style and dropped it).
    from rich.table import Table
    from rich.text import Text

    caption = "; ".join(n for n in (t.legend(BEST_MARK), extra_note) if n)
    table = Table(
        title=Text(t.title),
        title_justify="left",
        caption=Text(caption) if caption else None,
        caption_justify="left",
    )
    for i, header in enumerate(t.headers):
        # fold: a cell that must narrow wraps inside its cell instead of being cut with '…'
        wraps = fold_all or i in t.wrap
        table.add_column(
            Text(header), justify="left" if t.reads_left(i) else "right", overflow="fold", no_wrap=not wraps
        )
    for r in range(len(t.rows)):
        table.add_row(*(Text(_cell(t, r, c, _MARKED)) for c in range(len(t.rows[r]))))
    return table


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(t: TextTable) -> str:
    lines = [f"### {_md_escape(t.title)}", ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in t.headers) + " |")
    lines.append("|" + "|".join(":---" if t.reads_left(c) else "---:" for c in range(len(t.headers))) + "|")
    for r, row in enumerate(t.rows):
        cells = [_md_escape(_cell(t, r, c, "**{}**")) for c in range(len(row))]
        lines.append("| " + " | ".join(cells) + " |")
    legend = t.legend("**bold**:")
    if legend:
        lines += ["", _md_escape(legend)]
    return "\n".join(lines)


def _csv(tables: Sequence[TextTable]) -> str:
    """Long form, one cell per line, so tables of any shape share one header."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["table", "row", "column", "value", "best"])
    for t in tables:
        for r, row in enumerate(t.rows):
            for c in range(1, len(row)):
                writer.writerow([t.title, row[0], t.headers[c], row[c], int((r, c) in t.best)])
    return buffer.getvalue().rstrip("\n")


_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def _latex(t: TextTable) -> str:
    """A booktabs table; Chinese labels need xeCJK (or ctex) in the document preamble."""
    lines = [
        "\\begin{table}[ht]",
        "\\centering",
        f"\\caption{{{latex_escape(t.title)}}}",
        "\\begin{tabular}{l" + "r" * (len(t.headers) - 1) + "}",
        "\\toprule",
        " & ".join(latex_escape(h) for h in t.headers) + " \\\\",
        "\\midrule",
    ]
    for r, row in enumerate(t.rows):
        cells = [
            f"\\textbf{{{latex_escape(row[c])}}}" if (r, c) in t.best else latex_escape(row[c])
            for c in range(len(row))
        ]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines)
