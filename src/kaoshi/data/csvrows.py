"""The records of a benchmark's CSV file with a header row, or a RowError for what cannot be read: a bad
header, a malformed record, a record with more fields than the header, the header repeated mid-file.

The file is read as `read_text` reads every benchmark file (UTF-8 with or without BOM, CRLF); a quoted
cell may span lines, so each record says the line it starts on. A quote that is never closed makes the csv
module read the lines after it, to the end of the file, as one cell: a record whose quoted cell swallowed
lines and then has too few or too many fields, or runs into the end of the file, is reported at the line the
quote opened on, not as the fields it left missing.
"""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.data.errors import RowError
from kaoshi.data.limits import MAX_FIELD_CHARS
from kaoshi.data.rawio import read_opening, read_text


@dataclass(frozen=True)
class CsvRecord:
    """One data record: the line it starts on, its position among the file's records (1: the first
    after the header, as `pandas.read_csv` numbers them from 0) and its cells by column name."""

    line: int
    number: int
    cells: dict[str, str | None]  # None: the record has fewer fields than the header


def iter_csv_records(path: Path, required: Sequence[str]) -> Iterator[CsvRecord | RowError]:
    """Each non-blank record of the CSV file `path`, or a RowError naming the line. A header without every
    `required` column, or with a repeated one, is one error and nothing else is read."""
    file = str(path)
    lines = _Lines(read_text(path))
    reader = csv.DictReader(lines)
    try:
        columns = reader.fieldnames or []
    except csv.Error as exc:
        yield RowError(file, reader.line_num or 1, None, csv_failure(exc))
        return
    missing = [c for c in required if c not in columns]
    if missing:
        yield RowError(file, 1, missing[0], f"missing column(s) {', '.join(missing)} in the header")
        return
    repeated = sorted({c for c in columns if columns.count(c) > 1}, key=columns.index)
    if repeated:
        # csv.DictReader would keep the last of the repeated columns and silently drop the others.
        yield RowError(file, 1, repeated[0], f"column(s) {', '.join(repeated)} repeated in the header")
        return
    yield from _records(reader, lines, file, required)


class _Lines:
    """The text's lines as the csv reader takes them, counted: the first line of the record being read
    (csv skips blank lines before it) and whether reading it ran into the end of the text, which only a
    quoted cell still open at the end does."""

    def __init__(self, text: str) -> None:
        self._lines = iter(io.StringIO(text, newline=""))
        self.count = 0  # lines read so far
        self.first = 0  # the first non-blank line read since `start_record`, 0 before one
        self.at_end = False

    def start_record(self) -> None:
        self.first, self.at_end = 0, False

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._lines)
        except StopIteration:
            self.at_end = True
            raise
        self.count += 1
        if not self.first and line.strip("\r\n"):
            self.first = self.count
        return line


def _records(
    reader: csv.DictReader[str], lines: _Lines, file: str, required: Sequence[str]
) -> Iterator[CsvRecord | RowError]:
    number = 0
    columns = list(reader.fieldnames or [])
    rows = iter(reader)
    while True:
        lines.start_record()
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            # The reader cannot resynchronise after a malformed record; the rest of the file is not read.
            start = lines.first or lines.count
            reason = csv_failure(exc)
            if lines.count > start:  # most often a quote never closed, its cell grown over the lines after it
                reason += (
                    f" (the record runs on from line {start} to line {lines.count}: a quote never closed?)"
                )
            yield RowError(file, start, None, reason)
            return
        start = lines.first  # a record's first line is never blank: csv reads a blank line as no record
        number += 1  # blank lines are no records (csv skips them); a row of empty cells is one
        unclosed = _unclosed_quote(row, columns, start, lines)
        if unclosed is not None:
            # What the swallowed lines held is lost inside one cell; the reader read on to the end.
            yield RowError(file, *unclosed)
            continue
        if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
            continue
        if None in row:
            yield RowError(file, start, None, "row has more fields than the header")
            continue
        if all(row.get(column) == column for column in required):
            yield RowError(file, start, None, "the header row is repeated here")
            continue
        yield CsvRecord(start, number, dict(row))


def _unclosed_quote(
    row: dict[str | None, Any], columns: Sequence[str], start: int, lines: _Lines
) -> tuple[int, str | None, str] | None:
    """(line, column, reason) when the record holds a quoted cell that was never closed: the reader ran
    into the end of the file inside it, or it swallowed lines that look like rows and left the record with
    too few or too many fields. None for a record whose quoted cells close, line breaks inside or not."""
    cells: list[tuple[str | None, str]] = [
        (column, value) for column in columns if isinstance(value := row.get(column), str)
    ]
    extra = row.get(None)  # fields beyond the header, as a list
    if isinstance(extra, list):
        cells += [(None, value) for value in extra if isinstance(value, str)]
    if not cells:
        return None
    if lines.at_end:
        index = len(cells) - 1  # the cell still open at the end of the file is the last one read
        problem = "is never closed"
    else:
        # Only a cell that swallowed lines can be the culprit: the last one (a quote opened before it
        # would have swallowed it), and only if what it swallowed holds the delimiter, as rows do. A stray
        # quote further on closed it, so it is not closed where it was meant to be.
        multiline = [i for i, (_, value) in enumerate(cells) if "\n" in value]
        if None in row:
            problem = "is not closed on its line"
            leaves = "too many"
        elif len(cells) < len(columns):
            problem = "is not closed on its line"
            leaves = "too few"
        else:
            return None
        if not multiline or "," not in cells[multiline[-1]][1].partition("\n")[2]:
            return None
        index = multiline[-1]
    column = cells[index][0]
    opened = start + sum(cell.count("\n") for _, cell in cells[:index])
    if lines.at_end and lines.count == opened:
        swallowed = "it runs to the end of the file"
    elif lines.at_end:
        swallowed = f"it swallows lines {opened}-{lines.count}"
    else:
        swallowed = f"it swallows lines {opened}-{lines.count}, leaving the row {leaves} fields"
    return opened, column, f"a quote opened here {problem} ({swallowed})"


def read_csv_header(path: Path) -> list[str] | None:
    """The column names on the first line of a CSV file, read without reading the rest (for detecting
    a benchmark's files); None when it is no regular file, cannot be read or its first line is not CSV."""
    opening = read_opening(path, 64 * 1024)
    if opening is None:
        return None
    try:
        line = opening.split(b"\n", 1)[0].split(b"\r", 1)[0]
        # Not final: the opening may end inside a character of a long first line.
        first = codecs.getincrementaldecoder("utf-8-sig")().decode(line)
    except UnicodeDecodeError:
        return None
    try:
        return next(csv.reader([first]), None)
    except csv.Error:
        return None


def csv_failure(exc: csv.Error) -> str:
    """A csv module failure as a row error's reason."""
    if "field larger than field limit" in str(exc):
        return f"a field is longer than the limit of {MAX_FIELD_CHARS:,} characters"
    return f"malformed CSV: {exc}"
