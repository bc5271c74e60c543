"""Reading text files the way real benchmark files arrive: BOMs, CRLF, blank lines, bad bytes; and only
from regular files of bounded size (a FIFO would wait for a writer forever, /dev/zero never ends)."""

from __future__ import annotations

import bisect
import json
import os
import re
import stat
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from kaoshi.data.errors import DataError, RowError
from kaoshi.data.limits import MAX_DATA_MB_ENV, MAX_FIELD_CHARS, MAX_NESTING_DEPTH, max_data_bytes

_SURROGATE = re.compile("[\ud800-\udfff]")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
# Should a checked path turn into a FIFO before it is opened, opening it does not wait for a writer.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def path_problem(path: Path, *, folder_ok: bool = False) -> str | None:
    """Why `path` cannot be read as data, told without opening it: a dangling symbolic link, or something
    other than a regular file (or a folder, where `folder_ok`). None for a path that is not there at all:
    its reader says so."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if not path.is_symlink():
            return None
        target = os.readlink(path)
        if isinstance(exc, FileNotFoundError):
            return f"a symbolic link to {target}, which does not exist"
        return f"a symbolic link to {target}, which cannot be followed ({exc.strerror or exc})"
    if stat.S_ISREG(mode) or (folder_ok and stat.S_ISDIR(mode)):
        return None
    return f"{_kind(mode)}, not a regular file"


def present(path: Path) -> bool:
    """There, readable or not (a dangling link too): a loader that looks for a file by name reads it, so
    that one which cannot be read is named, not passed over as absent."""
    return path.exists() or path.is_symlink()


def refuse_special_path(path: Path) -> None:
    """DataError when `path` is there but is neither a regular file nor a folder (a FIFO, a device, a
    socket, a dangling link): data is read from files and folders only."""
    problem = path_problem(path, folder_ok=True)
    if problem is not None:
        raise DataError(f"{path}: {problem} (data is read from files and folders only)")


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


@contextmanager
def _open_regular(path: Path) -> Iterator[tuple[BinaryIO, int]]:
    """The open regular file `path` and its size; DataError for anything else."""
    problem = path_problem(path)
    if problem is not None:
        raise DataError(f"{path}: {problem}")
    with open(os.open(path, _OPEN_FLAGS), "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise DataError(f"{path}: {_kind(info.st_mode)}, not a regular file")
        yield handle, info.st_size


def read_bytes(path: Path) -> bytes:
    """The bytes of the data file `path`, read once; DataError for what is not a regular file or holds
    more than kaoshi.data.limits.max_data_bytes()."""
    limit = max_data_bytes()
    try:
        with _open_regular(path) as (handle, size):
            if size > limit:
                raise _too_large(path, limit, f"{size:,} bytes, ")
            data = handle.read(size + 1)
            if size < len(data) <= limit:  # it grew since, or (/proc) does not tell its size: read on
                data += handle.read(limit + 1 - len(data))
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise _too_large(path, limit)
    return data


def _too_large(path: Path, limit: int, size: str = "") -> DataError:
    return DataError(
        f"{path}: too large ({size}over the limit of {limit >> 20:,} MiB for a data file; set "
        f"{MAX_DATA_MB_ENV}=N to allow N MiB)"
    )


def read_opening(path: Path, size: int) -> bytes | None:
    """The first `size` bytes of the regular file `path`, for telling its format; None for anything else
    (a FIFO is never opened) or a file that cannot be read."""
    try:
        with _open_regular(path) as (handle, _):
            return handle.read(size)
    except (OSError, DataError):
        return None


def read_text(path: Path) -> str:
    """Read UTF-8 (with or without BOM); a file that is not UTF-8 is a DataError naming the byte offset."""
    raw = read_bytes(path)
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
            problem = text_problem(item)
            if problem is not None:
                return field, problem
        elif isinstance(item, (dict, list)):
            if depth >= MAX_NESTING_DEPTH:
                return field, f"nested deeper than {MAX_NESTING_DEPTH} levels"
            if isinstance(item, list):
                stack.extend((element, depth + 1, field) for element in item)
                continue
            for key, element in item.items():
                problem = text_problem(key)
                if problem is not None:
                    return field, f"a key {problem}"
                stack.append((element, depth + 1, field if depth else key))
    return None


def text_problem(text: str) -> str | None:
    """Why a text field breaks a limit (longer than MAX_FIELD_CHARS) or is not valid Unicode; None if not."""
    if len(text) > MAX_FIELD_CHARS:
        return f"text of {len(text):,} characters is longer than the limit of {MAX_FIELD_CHARS:,}"
    surrogate = _SURROGATE.search(text)
    if surrogate is not None:
        return f"holds a lone surrogate \\u{ord(surrogate.group()):04x} (not valid Unicode text)"
    return None


def _skip_ws(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match is not None else pos
