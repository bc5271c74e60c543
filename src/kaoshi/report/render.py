"""Render run summaries as a terminal table, Markdown, CSV or JSON."""

from __future__ import annotations

import csv
import io
import json

from rich.console import Console
from rich.table import Table

from kaoshi.report.aggregate import RunSummary, Tally

FORMATS = ("table", "md", "csv", "json")
_HEADERS = ("group", "n", "accuracy", "correct", "graded", "unparsed", "errors", "ungraded", "points")


def _row(label: str, tally: Tally) -> list[str]:
    accuracy = "—" if tally.accuracy is None else f"{100 * tally.accuracy:.1f}%"
    points = f"{tally.points:g}/{tally.max_points:g}"
    return [
        label,
        str(tally.n),
        accuracy,
        str(tally.correct),
        str(tally.graded),
        str(tally.unparsed),
        str(tally.errors),
        str(tally.ungraded),
        points,
    ]


def _rows(summary: RunSummary) -> list[tuple[str, list[list[str]]]]:
    """Sections: the overall line, then one section per grouping."""
    sections = [("overall", [_row("all", summary.overall)])]
    for key, table in summary.groups.items():
        sections.append((key, [_row(name, tally) for name, tally in table.items()]))
    return sections


def render_summary(summary: RunSummary, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(summary.to_json(), ensure_ascii=False, indent=2)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["run", "by", *_HEADERS])
        for key, rows in _rows(summary):
            for row in rows:
                writer.writerow([summary.run, key, *row])
        return buffer.getvalue().rstrip("\n")
    if fmt == "md":
        lines = [f"## {summary.run}"]
        for key, rows in _rows(summary):
            lines += ["", f"| {key} | " + " | ".join(_HEADERS[1:]) + " |", "|" + "---|" * len(_HEADERS)]
            lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    if fmt == "table":
        console = Console(record=True, width=120, file=io.StringIO(), force_terminal=False)
        for key, rows in _rows(summary):
            table = Table(title=f"{summary.run} — {key}", title_justify="left")
            for i, header in enumerate((key, *_HEADERS[1:])):
                table.add_column(header, justify="left" if i == 0 else "right")
            for row in rows:
                table.add_row(*row)
            console.print(table)
        return console.export_text().rstrip("\n")
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
