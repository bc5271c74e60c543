"""One math answer written as it is compared: the leniency of AGIEval's scorer for gaokao-mathcloze (its
MATH-style `is_equiv`, which compares two answers after rewriting both), so kaoshi's numbers stand next
to the published ones.

Applied alike to the reference and the answer (NFKC text):
- '$' delimiters, a whole-answer '\\boxed{...}', '\\displaystyle', '\\left' / '\\right' and the spacing
  commands '\\!' '\\,' '\\;' '\\ ' are removed; '\\dfrac' / '\\tfrac' become '\\frac', and a doubled
  backslash becomes one ('\\\\frac' -> '\\frac', as JSON-escaped text writes it);
- degrees ('^{\\circ}', '^\\circ', '°') and percent signs ('\\%', '%') are removed, as are units written
  after the value with '\\text{...}' or '\\mbox{...}' ('10\\text{ cm}' -> '10');
- a leading single-variable assignment is dropped ('x=3' -> '3');
- a decimal gets its leading zero ('.5' -> '0.5'), and '0.5' is '\\frac{1}{2}' (AGIEval's one numeric
  equivalence);
- braces are added where LaTeX lets them out ('\\frac12' -> '\\frac{1}{2}', '\\sqrt3' -> '\\sqrt{3}'), and a
  quotient of integers is a fraction ('1/2' -> '\\frac{1}{2}', '-3/4' -> '-\\frac{3}{4}');
- all whitespace is removed.
Nothing is computed: '0.25' and '\\frac{1}{4}' stay different, as do '2x+2' and '2(x+1)'.
"""

from __future__ import annotations

import re
import unicodedata

_SPACING = re.compile(r"\\left|\\right|\\displaystyle|\\[!,;]|\\ ")
_DEGREES = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°")
_PERCENT = re.compile(r"\\?%")
# Units after the value: '10\text{ cm}', '3\mbox{米}^{2}'.
_UNITS = re.compile(r"(?<=\S)\s*\\(?:text|mbox)\s*\{[^{}]*\}(?:\^\s*(?:\{\s*\d\s*\}|\d))?\s*$")
# 'x=3', 'y = -1': one variable, one '=' (a second one makes it an equation, not an assignment).
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z]\s*=(?!=)([^=]+)$")
_BARE_DECIMAL = re.compile(r"(?<!\d)\.(?=\d)")
_INTEGER_QUOTIENT = re.compile(r"^(-?)(\d+)/(\d+)$")
_SPACE = re.compile(r"\s+")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_BRACED_COMMAND = re.compile(r"(\\frac|\\sqrt)(?![A-Za-z])")
_ROOT_INDEX = re.compile(r"\s*\[[^\]]{0,20}\]")
_BOXED = "\\boxed{"


def normalize_math_answer(answer: str) -> str:
    """`answer` rewritten the way it is compared (module docstring)."""
    text = unicodedata.normalize("NFKC", answer).strip()
    text = text.replace("\\$", "").replace("$", "").replace("\\\\", "\\").strip()
    text = _unboxed(text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = _SPACING.sub("", text)
    text = _DEGREES.sub("", text)
    text = _PERCENT.sub("", text)
    text = _UNITS.sub("", text)
    assignment = _ASSIGNMENT.match(text)
    if assignment:
        text = assignment.group(1)
    text = _BARE_DECIMAL.sub("0.", _SPACE.sub("", _braced_arguments(text)))
    if text == "0.5":
        return "\\frac{1}{2}"
    quotient = _INTEGER_QUOTIENT.match(text)
    if quotient:
        sign, numerator, denominator = quotient.groups()
        return f"{sign}\\frac{{{numerator}}}{{{denominator}}}"
    return text


def _unboxed(text: str) -> str:
    """The content of a '\\boxed{...}' that is the whole answer."""
    if text.startswith(_BOXED) and closing_braces(text).get(len(_BOXED) - 1) == len(text) - 1:
        return text[len(_BOXED) : -1].strip()
    return text


def closing_braces(text: str) -> dict[int, int]:
    """The index of each '{' that closes -> the index of its '}', in one pass."""
    closing: dict[int, int] = {}
    opened: list[int] = []
    for position, char in enumerate(text):
        if char == "{":
            opened.append(position)
        elif char == "}" and opened:
            closing[opened.pop()] = position
    return closing


def _braced_arguments(text: str) -> str:
    """`text` with the arguments of every '\\frac' (two) and '\\sqrt' (one, after an optional '[n]') in
    braces: an argument written without them is a command ('\\pi') or one character."""
    closing = closing_braces(text)
    bare: set[tuple[int, int]] = set()  # (start, end) of each argument to put in braces
    for command in _BRACED_COMMAND.finditer(text):
        position = command.end()
        root = _ROOT_INDEX.match(text, position) if command.group(1) == "\\sqrt" else None
        if root is not None:
            position = root.end()
        for _ in range(2 if command.group(1) == "\\frac" else 1):
            while position < len(text) and text[position].isspace():
                position += 1
            if position >= len(text) or text[position] == "}":
                break
            if text[position] == "{":
                if position not in closing:
                    break
                position = closing[position] + 1
                continue
            word = _COMMAND.match(text, position)
            end = word.end() if word is not None else position + 1
            bare.add((position, end))
            position = end
    pieces: list[str] = []
    written = 0
    for start, end in sorted(bare):
        pieces.append(text[written:start] + "{" + text[start:end] + "}")
        written = end
    pieces.append(text[written:])
    return "".join(pieces)
