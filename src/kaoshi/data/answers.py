"""Parse gold answers as benchmarks write them: 'D', 'ABC', 'A、B', '正确'/'错误', true/false, a reference."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kaoshi.data.errors import FieldError
from kaoshi.data.options import normalize_letter

_TRUE = {"正确", "对", "是", "√", "✓", "✔", "true", "t", "yes", "y", "1"}
_FALSE = {"错误", "错", "否", "×", "✗", "✘", "x", "false", "f", "no", "n", "0"}
_LETTER_SEPARATORS = re.compile(r"[\s,，、;；/|]+")


def parse_judge_answer(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise FieldError("answer", f"true/false answer must be 正确 or 错误 (or true/false), got {value!r}")


def parse_option_letters(value: object, *, exactly_one: bool = False) -> frozenset[str]:
    """Letters from 'ABD', 'A、B、D', ['A', 'D'] or full-width 'ＡＢ'; `exactly_one` (a single-choice
    answer) refuses more than one."""
    if isinstance(value, list):
        text = "".join(str(v) for v in value)
    elif isinstance(value, str):
        text = value
    else:
        raise FieldError("answer", f"expected option letters, got {type(value).__name__} {value!r}")
    letters = [normalize_letter(ch) for ch in _LETTER_SEPARATORS.sub("", text)]
    if not letters:
        raise FieldError("answer", "answer is empty")
    bad = [ch for ch in letters if not ("A" <= ch <= "Z")]
    if bad:
        raise FieldError("answer", f"answer {value!r} is not option letters (bad character {bad[0]!r})")
    if exactly_one and len(letters) != 1:
        raise FieldError("answer", f"single-choice answer must be one letter, got {value!r}")
    if len(set(letters)) != len(letters):
        raise FieldError("answer", f"answer {value!r} repeats a letter")
    return frozenset(letters)


def require_among_options(
    answer: frozenset[str], options: Sequence[tuple[str, str]], raw: object, field: str = "answer"
) -> None:
    """FieldError when `answer` (written `raw` in the file) names a letter that no option has."""
    letters = "".join(letter for letter, _ in options)
    outside = "".join(sorted(answer - set(letters)))
    if outside:
        raise FieldError(field, f"answer {raw!r} names {outside}, not among the options {letters}")


def parse_reference_answer(value: object) -> str:
    """An open question's reference answer: non-empty text, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise FieldError("answer", "an open question needs a non-empty reference answer")
    return value.strip()
