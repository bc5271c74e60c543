"""Split a question text with embedded options ("A．清水\nB．泡沫 ...") into stem and ordered options."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

# A letter (half- or full-width A..N) at the start of a line, then one of the separators seen in
# QualBench: full-width '．', '.', '、', ':', '：', ')' / '）', or whitespace.
_OPTION_LINE = re.compile(
    r"^[ \t\u3000]*([A-NＡ-Ｎ])[ \t\u3000]*(?:[．.、:：)）]|[ \t\u3000])[ \t\u3000]*(.*)$"
)
# Options written on one line: "A．清水 B．泡沫 C．..." (needs an explicit separator after each letter). A
# letter stuck to a number before it takes a full stop ("初现16C．"): a page number PDF extraction left in.
_INLINE_OPTION = re.compile(
    r"(?<![A-Za-z0-9Ａ-Ｚａ-ｚ])([A-NＡ-Ｎ])[ \t\u3000]*[．.、:：)）]"
    r"|(?<=[0-9])([A-NＡ-Ｎ])[．.](?=[ \t\u3000]*\S)"
)
_LAST_LETTER = "N"


# Compiled on first use, each letter once: the thirteen patterns took about 3 ms of every command's start
# (the store's records import this module), and only reading an exam's options uses them.
@cache
def _in_line_option(letter: str) -> re.Pattern[str]:
    """The option `letter` inside a line of the option block: after a space ("C．甲 D．乙" on one line), or
    glued to the text before it ("…会增加C．给…", "升高4C.在…"), how PDF extraction joins two options;
    with a full stop, and text after it. A Latin letter before or after it makes it part of a word or an
    abbreviation ("AB.", "D.C.")."""
    both = f"{letter}{chr(ord(letter) + 0xFEE0)}"
    return re.compile(rf"(?<=[^A-Za-zＡ-Ｚａ-ｚ])[{both}][．.](?![A-Za-z])(?=[ \t\u3000]*\S)")


# The letters an option can start inside a line with (A starts the block).
_IN_LINE_LETTERS = frozenset(map(chr, range(ord("B"), ord(_LAST_LETTER) + 1)))


@dataclass(frozen=True)
class OptionSplit:
    """A question text read as its stem and options; `glued`: the options whose letter is stuck to the word
    before it (no line break or space between them), a flaw of the text that the split reads through."""

    stem: str
    options: tuple[tuple[str, str], ...]
    glued: tuple[str, ...] = ()


def normalize_letter(ch: str) -> str:
    """Full-width 'Ａ' -> 'A'; other characters pass through NFKC and upper-casing."""
    return unicodedata.normalize("NFKC", ch).upper()


def split_options(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Return (stem, options). Options must run A, B, C, ... consecutively; none found -> (text, ())."""
    found = read_options(text)
    return found.stem, found.options


def read_options(text: str) -> OptionSplit:
    """split_options, also naming the options whose letter is glued to the text before it."""
    lines = text.split("\n")
    letters = [_line_letter(line) for line in lines]
    # The option block starts at the last line lettered A from which the letters run on in order, so a
    # stem line such as "A．某公司..." before the real options does not end the stem early. From a line
    # lettered A every later line is an option or a wrapped option's text, so the block has at least two
    # options exactly when a line lettered B follows: the start is the last A before the last B. Found in
    # one pass, so a question with thousands of option lines is split in linear time.
    last_b = max((i for i, letter in enumerate(letters) if letter == "B"), default=-1)
    start = max((i for i, letter in enumerate(letters[: max(last_b, 0)]) if letter == "A"), default=-1)
    if start < 0:
        return _split_inline(text)
    options, glued = _collect_block(lines[start:], letters[start:])
    return OptionSplit("\n".join(lines[:start]).strip(), options, glued)


def _line_letter(line: str) -> str | None:
    match = _OPTION_LINE.match(line)
    return normalize_letter(match.group(1)) if match is not None else None


def _collect_block(
    lines: list[str], letters: list[str | None]
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The options from a line lettered A on: lines lettered in order start options, others continue one.
    Inside a line, the next letter in order starts the next option, unless a later line starts with that
    letter or the letter sits inside a $formula$."""
    last_line = {letter: i for i, letter in enumerate(letters) if letter is not None}
    options: list[tuple[str, list[str]]] = []
    glued: list[str] = []
    for i, (line, letter) in enumerate(zip(lines, letters, strict=True)):
        if letter == chr(ord("A") + len(options)):
            match = _OPTION_LINE.match(line)
            assert match is not None
            options.append((letter, []))
            rest, starts = match.group(2), True
        elif line.strip():
            # A wrapped option: the text continues on the next line.
            rest, starts = line, False
        else:
            continue
        while (found := _next_in_line(rest, chr(ord("A") + len(options)), last_line, i)) is not None:
            if _glued_at(rest, found):
                glued.append(chr(ord("A") + len(options)))
            before, rest = rest[: found.start()].strip(), rest[found.end() :]
            if before or starts:
                options[-1][1].append(before)
            options.append((chr(ord("A") + len(options)), []))
            starts = True
        if rest.strip() or starts:
            options[-1][1].append(rest.strip())
    return tuple((letter, "\n".join(parts)) for letter, parts in options), tuple(glued)


def _next_in_line(text: str, letter: str, last_line: dict[str, int], line: int) -> re.Match[str] | None:
    """Where option `letter` starts inside `text`, a part of line number `line` of the block."""
    if letter not in _IN_LINE_LETTERS or last_line.get(letter, -1) > line:
        return None
    pattern = _in_line_option(letter)
    dollars, counted = 0, 0
    for found in pattern.finditer(text):
        dollars, counted = dollars + text.count("$", counted, found.start()), found.start()
        if dollars % 2 == 0:
            return found
    return None


def _split_inline(text: str) -> OptionSplit:
    matches = list(_INLINE_OPTION.finditer(text))
    # Keep the last run of consecutive letters starting at A.
    best: list[re.Match[str]] = []
    run: list[re.Match[str]] = []
    for match in matches:
        letter = normalize_letter(match.group(1) or match.group(2))
        if letter == "A":
            run = [match]
        elif run and letter == chr(ord("A") + len(run)):
            run.append(match)
        else:
            continue
        if len(run) >= 2:
            best = list(run)
    if not best:
        return OptionSplit(text.strip(), ())
    options = []
    for i, match in enumerate(best):
        end = best[i + 1].start() if i + 1 < len(best) else len(text)
        options.append((chr(ord("A") + i), text[match.end() : end].strip()))
    if not all(body for _, body in options):
        return OptionSplit(text.strip(), ())
    glued = tuple(letter for (letter, _), match in zip(options, best, strict=True) if _glued_at(text, match))
    return OptionSplit(text[: best[0].start()].strip(), tuple(options), glued)


def _glued_at(text: str, match: re.Match[str]) -> bool:
    """The option letter `match` found is stuck to a word before it: a letter or digit of any script."""
    return match.start() > 0 and text[match.start() - 1].isalnum()
