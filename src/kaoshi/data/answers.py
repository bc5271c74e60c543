"""Parse gold answers as benchmarks write them: 'D', 'ABC', 'A、B', '正确'/'错误', true/false."""

from __future__ import annotations

import re

from kaoshi.data.errors import FieldError
from kaoshi.data.model import QuestionType
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


def parse_letters(value: object, qtype: QuestionType) -> frozenset[str]:
    """Letters from 'ABD', 'A、B、D', ['A', 'D'] or full-width 'ＡＢ'; single choice needs exactly one."""
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
    if qtype is QuestionType.SINGLE and len(letters) != 1:
        raise FieldError("answer", f"single-choice answer must be one letter, got {value!r}")
    if len(set(letters)) != len(letters):
        raise FieldError("answer", f"answer {value!r} repeats a letter")
    return frozenset(letters)
