"""Reading text files the way real benchmark files arrive: BOMs, CRLF, blank lines, bad bytes."""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kaoshi.data.errors import DataError, RowError


def read_text(path: Path) -> str:
    """Read UTF-8 (with or without BOM); a file that is not UTF-8 is a DataError naming the byte offset."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(
            f"{path}: not UTF-8 text",
            (RowError(str(path), line, None, f"invalid UTF-8 byte at offset {exc.start}"),),
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def iter_jsonl(path: Path, text: str) -> Iterator[tuple[int, Any] | RowError]:
    """Yield (line number, value) per non-blank line, or a RowError for a line that is not JSON."""
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield RowError(str(path), number, None, f"invalid JSON: {exc.msg} (column {exc.colno})")


def iter_json_array(path: Path, text: str) -> Iterator[tuple[int, Any] | RowError]:
    """Yield (line number, element) for each element of a top-level JSON array.

    The standard json module gives no line numbers, so the array is decoded element by element.
    """
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        raise DataError(
            f"{path}: expected a JSON array of question objects",
            (RowError(str(path), line_of(pos), None, "file does not start with '['"),),
        )
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        return
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            # The rest of the array cannot be located reliably after a syntax error.
            raise DataError(
                f"{path}: invalid JSON",
                (RowError(str(path), exc.lineno, None, f"invalid JSON: {exc.msg} (column {exc.colno})"),),
            ) from exc
        yield line_of(pos), value
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            return
        raise DataError(
            f"{path}: invalid JSON",
            (RowError(str(path), line_of(pos), None, "expected ',' or ']' after an array element"),),
        )


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos
