"""Plain tables of strings and their renderings: terminal, Markdown, CSV (long form) and LaTeX."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.table import Table

from kaoshi.errors import InputError

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


def render_tables(tables: Sequence[TextTable], fmt: str) -> str:
    if fmt == "table":
        return _terminal(tables)
    if fmt == "md":
        return "\n\n".join(_markdown(t) for t in tables)
    if fmt == "csv":
        return _csv(tables)
    if fmt == "latex":
        return "\n\n".join(_latex(t) for t in tables)
    raise InputError(f"unknown format {fmt!r} (choose from {', '.join((*TEXT_FORMATS, 'json'))})")


def _cell(table: TextTable, r: int, c: int, marked: str) -> str:
    text = table.rows[r][c]
    return marked.format(text) if (r, c) in table.best else text


TERMINAL_WIDTH = 160  # what a table is laid out in; wider ones get up to MAX_TERMINAL_WIDTH before wrapping
MAX_TERMINAL_WIDTH = 240


def _terminal(tables: Sequence[TextTable]) -> str:
    rendered = [_rich_table(t) for t in tables]
    measure = Console(width=MAX_TERMINAL_WIDTH, file=io.StringIO())
    natural = max((measure.measure(table).maximum for table in rendered), default=0)
    width = min(max(TERMINAL_WIDTH, natural), MAX_TERMINAL_WIDTH)
    console = Console(record=True, width=width, file=io.StringIO(), force_terminal=False)
    for table in rendered:
        console.print(table)
    return console.export_text().rstrip("\n")


def _rich_table(t: TextTable) -> Table:
    caption = t.legend(BEST_MARK) or None
    table = Table(title=t.title, title_justify="left", caption=caption, caption_justify="left")
    for i, header in enumerate(t.headers):
        # fold: a long run name or subject wraps inside its cell instead of being cut with '…'
        table.add_column(header, justify="left" if i == 0 else "right", overflow="fold")
    for r in range(len(t.rows)):
        table.add_row(*(_cell(t, r, c, "{} " + BEST_MARK) for c in range(len(t.rows[r]))))
    return table


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _markdown(t: TextTable) -> str:
    lines = [f"### {_md_escape(t.title)}", ""]
    lines.append("| " + " | ".join(_md_escape(h) for h in t.headers) + " |")
    lines.append("|" + "|".join([":---"] + ["---:"] * (len(t.headers) - 1)) + "|")
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
