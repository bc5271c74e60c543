"""Reading text files the way real benchmark files arrive: BOMs, CRLF, blank lines, bad bytes."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

from kaoshi.data.errors import DataError, RowError
from kaoshi.data.limits import MAX_FIELD_CHARS, MAX_NESTING_DEPTH

_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"[ \t\n\r]*")


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
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            yield RowError(str(path), number, None, _decode_failure(exc))
            continue
        problem = check_json_value(value)
        if problem is not None:
            yield RowError(str(path), number, *problem)
            continue
        yield number, value


def iter_json_array(path: Path, text: str) -> Iterator[tuple[int, Any] | RowError]:
    """Yield (line number, element) for each element of a top-level JSON array.

    The standard json module gives no line numbers, so the array is decoded element by element.
    """
    line_of = _line_finder(text)
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "[":
        raise DataError(
            f"{path}: expected a JSON array of question objects",
            (RowError(str(path), line_of(pos), None, "file does not start with '['"),),
        )
    end = yield from _array_elements(path, text, pos, line_of)
    _refuse_trailing_text(path, text, end, line_of)


def iter_json_object_array(path: Path, text: str, key: str) -> Iterator[tuple[int, Any] | RowError]:
    """Yield (line number, element) for each element of the array under `key` in a top-level JSON object
    (`{"keywords": ..., "example": [...]}`); DataError when the file is no such object."""
    line_of = _line_finder(text)
    decoder = json.JSONDecoder()

    def refuse(pos: int, reason: str) -> DataError:
        return DataError(f"{path}: invalid JSON", (RowError(str(path), line_of(pos), None, reason),))

    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "{":
        raise refuse(pos, f"expected a JSON object with {key!r} holding the questions")
    pos = _skip_ws(text, pos + 1)
    found = False
    while pos < len(text) and text[pos] != "}":
        try:
            name, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            raise refuse(pos, _decode_failure(exc)) from None
        pos = _skip_ws(text, pos)
        if not isinstance(name, str) or pos >= len(text) or text[pos] != ":":
            raise refuse(pos, "expected a key and ':' in the top-level object")
        pos = _skip_ws(text, pos + 1)
        if name == key and pos < len(text) and text[pos] == "[":
            found = True
            pos = yield from _array_elements(path, text, pos, line_of)
        else:
            try:
                _, pos = decoder.raw_decode(text, pos)
            except (ValueError, RecursionError) as exc:
                raise refuse(pos, _decode_failure(exc)) from None
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
        elif pos >= len(text) or text[pos] != "}":
            raise refuse(pos, "expected ',' or '}' in the top-level object")
    if pos >= len(text):
        raise refuse(pos, "the top-level object is not closed")
    if not found:
        raise refuse(0, f"no {key!r} array in the top-level object")
    trailing = _skip_ws(text, pos + 1)
    if trailing < len(text):
        raise refuse(trailing, "text after the closing '}' of the top-level object")


def _line_finder(text: str) -> Callable[[int], int]:
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    return line_of


def _array_elements(
    path: Path, text: str, pos: int, line_of: Callable[[int], int]
) -> Generator[tuple[int, Any] | RowError, None, int]:
    """The elements of the JSON array starting at `pos` ('['); returns the offset after its ']'."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        return pos + 1
    while True:
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as exc:
            # The rest of the array cannot be located reliably after a syntax error.
            line = exc.lineno if isinstance(exc, json.JSONDecodeError) else line_of(pos)
            raise DataError(
                f"{path}: invalid JSON", (RowError(str(path), line, None, _decode_failure(exc)),)
            ) from None
        problem = check_json_value(value)
        if problem is not None:
            yield RowError(str(path), line_of(pos), *problem)
        else:
            yield line_of(pos), value
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]":
            return pos + 1
        raise DataError(
            f"{path}: invalid JSON",
            (RowError(str(path), line_of(pos), None, "expected ',' or ']' after an array element"),),
        )


def _refuse_trailing_text(path: Path, text: str, end: int, line_of: Callable[[int], int]) -> None:
    """The file holds one array: anything after it (a second array, a stray object) would be dropped."""
    pos = _skip_ws(text, end)
    if pos >= len(text):
        return
    what = "a second JSON array" if text[pos] == "[" else "text"
    raise DataError(
        f"{path}: {what} after the JSON array (the file must hold exactly one array)",
        (RowError(str(path), line_of(pos), None, f"{what} after the closing ']' of the question array"),),
    )


def _decode_failure(exc: ValueError | RecursionError) -> str:
    """A decoding failure as a row error's reason."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    if isinstance(exc, RecursionError):
        return f"invalid JSON: nested deeper than {MAX_NESTING_DEPTH} levels"
    if "integer string conversion" in str(exc):
        return "invalid JSON: a number with more than 4,300 digits"
    return f"invalid JSON: {exc}"


def check_json_value(value: Any) -> tuple[str | None, str] | None:
    """(field, reason) for the first decoded value that breaks a limit (kaoshi.data.limits) or holds text
    that is not valid Unicode; None when the whole value is fine. Iterative, so depth cannot overflow."""
    stack: list[tuple[Any, int, str | None]] = [(value, 0, None)]
    while stack:
        item, depth, field = stack.pop()
        if isinstance(item, str):
            problem = _text_problem(item)
            if problem is not None:
                return field, problem
        elif isinstance(item, (dict, list)):
            if depth >= MAX_NESTING_DEPTH:
                return field, f"nested deeper than {MAX_NESTING_DEPTH} levels"
            if isinstance(item, list):
                stack.extend((element, depth + 1, field) for element in item)
                continue
            for key, element in item.items():
                problem = _text_problem(key)
                if problem is not None:
                    return field, f"a key {problem}"
                stack.append((element, depth + 1, field if depth else key))
    return None


def _text_problem(text: str) -> str | None:
    if len(text) > MAX_FIELD_CHARS:
        return f"text of {len(text):,} characters is longer than the limit of {MAX_FIELD_CHARS:,}"
    surrogate = _SURROGATE.search(text)
    if surrogate is not None:
        return f"holds a lone surrogate \\u{ord(surrogate.group()):04x} (not valid Unicode text)"
    return None


def _skip_ws(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match is not None else pos
