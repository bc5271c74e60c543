"""Size limits on input data, so a malformed or hostile file ends in a clear error, not a hang or a crash.

Real exams are far inside every limit: QualBench nests two levels deep and its longest field is a few
thousand characters; C-Eval's longest cell is under 10,000 characters; the largest published data file,
QualBench.json, is a few tens of MB, and no file of the repositories tests/realdata checks passes 4 MB.
"""

from __future__ import annotations

import os

from kaoshi.errors import InputError

# JSON rows nest objects and lists at most this deep (a question row needs 3: row -> options -> text;
# `meta` may hold more). Python's own decoder fails on about 1,000 levels with a RecursionError.
MAX_NESTING_DEPTH = 32
# One text field (a question, an option, an explanation, a CSV cell) holds at most this many characters.
# The same as Python's csv module's default field limit, so JSON and CSV files share one limit.
MAX_FIELD_CHARS = 131_072
# A prompt that a user template renders holds at most this many characters: far above any model's context,
# low enough that `{{ question * 50000000 }}` stops at once instead of exhausting memory.
MAX_PROMPT_CHARS = 1_000_000
# What rendering one prompt from a user template may cost (kaoshi.prompts.jinja_sandbox). A real template
# (options x exemplars) takes a few hundred steps, builds a few times its output and renders in well under
# a millisecond; each limit is thousands of times that, and each stops a hostile template within seconds:
# steps are loop iterations, calls, filters and outputs (three nested `range(100000)` loops never ended);
# work is every character and item the template builds on the way, its output included, so memory stays
# tens of MB (`'x'|center(10**9)` allocated 1 GB); a number may have as many digits as Python prints.
MAX_TEMPLATE_STEPS = 1_000_000
MAX_TEMPLATE_WORK_CHARS = 10 * MAX_PROMPT_CHARS
TEMPLATE_TIME_LIMIT_S = 2.0
MAX_TEMPLATE_INT_DIGITS = 4_300  # Python's own default limit on int <-> str conversion
# A template file holds at most this many characters (a real one holds a few hundred; a long hand-written
# instruction with exemplars a few thousand).
MAX_TEMPLATE_CHARS = 100_000
# An error message shows at most this many characters of the reason and field name (a 10,000-option row
# must not produce a 40 KB message).
MAX_REASON_CHARS = 300
MAX_FIELD_NAME_CHARS = 60
# One data file holds at most this many MiB: several times the largest published file, low enough that a
# file read whole (decoded, then parsed) stays within a laptop's memory. The environment variable raises it.
MAX_DATA_MB = 256
MAX_DATA_MB_ENV = "KAOSHI_MAX_DATA_MB"


def max_data_bytes() -> int:
    """The most bytes one data file may hold: KAOSHI_MAX_DATA_MB (MiB) where it is set, else MAX_DATA_MB."""
    given = os.environ.get(MAX_DATA_MB_ENV, "").strip()
    if not given:
        return MAX_DATA_MB << 20
    if not given.isdecimal() or len(given) > 9 or int(given) < 1:
        raise InputError(f"{MAX_DATA_MB_ENV} must be a whole number of MiB, 1 or more, got {given!r}")
    return int(given) << 20


def shorten(text: str, limit: int) -> str:
    """text, cut to about `limit` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"
