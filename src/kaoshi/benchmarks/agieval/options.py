"""AGIEval's option strings: each option's letter and text, and the quirks of the published strings.

AGIEval's code (src/dataset_loader.py) joins a row's option strings as they are, so its prompt shows
whatever prefix a string has, and a row's label names the letter the prompt shows. kaoshi keeps the
strings for the prompt (Question.verbatim) and reads each option's letter from its own prefix. Most rows
write '(A)text', but the published data/v1 (at 5c77d07) also has, seen by reading every Chinese task file:
'A．text' and '  A．text' (gaokao-chinese, gaokao-history, logiqa-zh), '   A. text   ' (gaokao-english),
'A、', 'A:', 'A。' and 'A text' (logiqa-zh), options out of letter order ('(A)', '(C)', '(B)', '(D)', with
the label naming the written letter: logiqa-zh), a letter written twice ('(A)', '(B)', '(C)', '(C)':
gaokao-history), options with no letter (gaokao-chemistry) and an option with no text ('(D)':
gaokao-chemistry). Each is read (below) and reported as a quirk, never refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kaoshi.data.errors import FieldError
from kaoshi.data.options import normalize_letter, split_options

OPTION_LETTERS = "ABCDEFG"  # AGIEval's prompts name the last option from these
STANDARD_FORM = "(A)"
SPACED_FORM = "A "
_SPACE = "[ \t\r\n\u3000]"
# '(A)', '（A）' (any case); 'A．', 'A.', 'A、', 'A:', 'A：', 'A。' (capitals only, so an English text is
# not read as a prefix); or a capital and a space ('A 没有党参'), read only where that letter belongs.
_BRACKETED = re.compile(rf"^{_SPACE}*([(（]{_SPACE}*([A-Za-zＡ-Ｚａ-ｚ]){_SPACE}*[)）]){_SPACE}*")
_PUNCTUATED = re.compile(rf"^{_SPACE}*(([A-GＡ-Ｇ]){_SPACE}*[．.、:：。]){_SPACE}*")
_SPACED = re.compile(rf"^{_SPACE}*(([A-GＡ-Ｇ])){_SPACE}+(?=\S)")

OUT_OF_ORDER = (
    "write their options out of letter order (read by the letters written, as AGIEval's prompt shows them)"
)
LETTER_TWICE = "write an option's letter where another belongs, e.g. '(C)' twice (read by place)"
NO_LETTER = "have an option without a letter (read by place)"
NO_TEXT = "have an option with no text after its letter"


@dataclass(frozen=True)
class _Written:
    """One option string: the letter its prefix writes (None: no prefix), the prefix's form, its text."""

    letter: str | None
    form: str
    text: str


def read_options(raw: list[str]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The options ((letter, text) in letter order) of a row's option strings, and the quirks found."""
    if len(raw) == 1:
        return _read_one_string(raw[0]), ()
    if len(raw) > len(OPTION_LETTERS):
        raise FieldError("options", f"at most {len(OPTION_LETTERS)} options (A-G), got {len(raw)}")
    expected = OPTION_LETTERS[: len(raw)]
    written = [_written(text, place) for text, place in zip(raw, expected, strict=True)]
    if any(w.letter is None for w in written):
        # 'A 甲' is a prefix only in a row whose every option has one: elsewhere 'A kite …' is text.
        written = [
            _Written(None, "", text.strip()) if w.form == SPACED_FORM else w
            for w, text in zip(written, raw, strict=True)
        ]
    letters, quirks = _letters(written, expected)
    forms = sorted({w.form for w in written if w.letter is not None and w.form != STANDARD_FORM})
    quirks += [f"write options as '{form}…', not '(A)…'" for form in forms]
    options = sorted(zip(letters, (w.text for w in written), strict=True))
    if any(not text for _, text in options):
        quirks.append(NO_TEXT)
    return tuple(options), tuple(quirks)


def _letters(written: list[_Written], expected: str) -> tuple[list[str], list[str]]:
    """Each option's letter and the quirks of the lettering: the letters written when they are the
    expected ones in some order (AGIEval's prompt shows them, and the label names one of them), else each
    option's place."""
    letters = [w.letter for w in written]
    if sorted(letter or "" for letter in letters) == list(expected):
        in_order = "".join(letter or "" for letter in letters) == expected
        return [letter or "" for letter in letters], [] if in_order else [OUT_OF_ORDER]
    quirks = []
    if any(letter is None for letter in letters):
        quirks.append(NO_LETTER)
    if any(letter not in (None, place) for letter, place in zip(letters, expected, strict=True)):
        quirks.append(LETTER_TWICE)
    return list(expected), quirks


def _written(text: str, place: str) -> _Written:
    for pattern in (_BRACKETED, _PUNCTUATED, _SPACED):
        match = pattern.match(text)
        if match is None:
            continue
        letter = normalize_letter(match.group(2))
        if pattern is _SPACED and letter != place:
            break  # 'B超…' as option A is text, not a prefix
        form = re.sub(_SPACE, "", match.group(1)).replace(match.group(2), "A") or "A"
        return _Written(letter, SPACED_FORM if pattern is _SPACED else form, text[match.end() :].strip())
    return _Written(None, "", text.strip())


def _read_one_string(text: str) -> tuple[tuple[str, str], ...]:
    """A single string holding every option ('A. 甲\tB. 乙 …', a form AGIEval's prompt code allows for),
    split as QualBench's embedded options are."""
    _, embedded = split_options(text.replace("\t", "\n"))
    if len(embedded) < 2:
        raise FieldError("options", f"one option string {text!r} holds no lettered options")
    if len(embedded) > len(OPTION_LETTERS):
        raise FieldError("options", f"at most {len(OPTION_LETTERS)} options (A-G), got {len(embedded)}")
    empty = next((letter for letter, body in embedded if not body.strip()), None)
    if empty is not None:
        raise FieldError("options", f"option {empty} is empty")
    return tuple((letter, body.strip()) for letter, body in embedded)
