"""Size limits on input data, so a malformed or hostile file ends in a clear error, not a hang or a crash.

Real exams are far inside every limit: QualBench nests two levels deep and its longest field is a few
thousand characters; C-Eval's longest cell is under 10,000 characters.
"""

from __future__ import annotations

# JSON rows nest objects and lists at most this deep (a question row needs 3: row -> options -> text;
# `meta` may hold more). Python's own decoder fails on about 1,000 levels with a RecursionError.
MAX_NESTING_DEPTH = 32
# One text field (a question, an option, an explanation, a CSV cell) holds at most this many characters.
# The same as Python's csv module's default field limit, so JSON and CSV files share one limit.
MAX_FIELD_CHARS = 131_072
# A prompt that a user template renders holds at most this many characters: far above any model's context,
# low enough that `{{ question * 50000000 }}` stops at once instead of exhausting memory.
MAX_PROMPT_CHARS = 1_000_000
# An error message shows at most this many characters of the reason and field name (a 10,000-option row
# must not produce a 40 KB message).
MAX_REASON_CHARS = 300
MAX_FIELD_NAME_CHARS = 60


def shorten(text: str, limit: int) -> str:
    """text, cut to about `limit` characters with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"
