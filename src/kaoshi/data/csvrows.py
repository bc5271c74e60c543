"""The records of a benchmark's CSV file with a header row, or a RowError for what cannot be read: a bad
header, a malformed record, a record with more fields than the header, the header repeated mid-file.

The file is read as `read_text` reads every benchmark file (UTF-8 with or without BOM, CRLF); a quoted
cell may span lines, so each record says the line it starts on.
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
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
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
    yield from _records(reader, file, required)


def _records(
    reader: csv.DictReader[str], file: str, required: Sequence[str]
) -> Iterator[CsvRecord | RowError]:
    next_line = 2
    number = 0
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            # The reader cannot resynchronise after a malformed record; the rest of the file is not read.
            yield RowError(file, next_line, None, csv_failure(exc))
            return
        # The record ends on reader.line_num and spans one line more than the line breaks inside its quoted
        # cells; counted back from its end, so blank lines csv skipped before it are not taken for it.
        start, next_line = reader.line_num - _line_breaks(row), reader.line_num + 1
        number += 1  # blank lines are no records (csv skips them); a row of empty cells is one
        if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
            continue
        if None in row:
            yield RowError(file, start, None, "row has more fields than the header")
            continue
        if all(row.get(column) == column for column in required):
            yield RowError(file, start, None, "the header row is repeated here")
            continue
        yield CsvRecord(start, number, dict(row))


def _line_breaks(row: dict[str | None, Any]) -> int:
    cells = [value for value in row.values() if isinstance(value, str)]
    extra = row.get(None)  # fields beyond the header, as a list
    if isinstance(extra, list):
        cells += [value for value in extra if isinstance(value, str)]
    return sum(cell.count("\n") for cell in cells)


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
