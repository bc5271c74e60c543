"""What detectors read of a file to tell its format: the first record of a JSON Lines file."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

from kaoshi.data.rawio import read_opening

# Enough for the first record of any published file; a longer first line is read by reading on.
_OPENING = 64 * 1024


def first_jsonl_record(path: Path) -> object | None:
    """The value on the first non-blank line of the file `path`; None when it has none, is not UTF-8,
    cannot be read or that line is not JSON. A line Python's json cannot decode at all (a number of 4,301
    digits, nesting 1,000 deep) raises its ValueError or RecursionError, for detect_benchmark to name."""
    size = _OPENING
    while True:
        opening = read_opening(path, size)
        if opening is None:
            return None
        whole = len(opening) < size
        try:
            # Not final unless the whole file was read: the opening may end inside a character.
            text = codecs.getincrementaldecoder("utf-8-sig")().decode(opening, final=whole)
        except UnicodeDecodeError:
            return None
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        complete = lines if whole else lines[:-1]  # the last piece of an opening may be cut short
        first = next((line for line in complete if line.strip()), None)
        if first is not None:
            try:
                value: object = json.loads(first)
            except json.JSONDecodeError:
                return None
            return value
        if whole:
            return None
        size *= 4
