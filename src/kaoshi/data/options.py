"""Split a question text with embedded options ("A．清水\nB．泡沫 ...") into stem and ordered options."""

from __future__ import annotations

import re
import unicodedata

# A letter (half- or full-width A..N) at the start of a line, then one of the separators seen in
# QualBench: full-width '．', '.', '、', ':', '：', ')' / '）', or whitespace.
_OPTION_LINE = re.compile(
    r"^[ \t\u3000]*([A-NＡ-Ｎ])[ \t\u3000]*(?:[．.、:：)）]|[ \t\u3000])[ \t\u3000]*(.*)$"
)
# Options written on one line: "A．清水 B．泡沫 C．..." (needs an explicit separator after each letter).
_INLINE_OPTION = re.compile(r"(?<![A-Za-z0-9Ａ-Ｚａ-ｚ])([A-NＡ-Ｎ])[ \t\u3000]*[．.、:：)）]")


def normalize_letter(ch: str) -> str:
    """Full-width 'Ａ' -> 'A'; other characters pass through NFKC and upper-casing."""
    return unicodedata.normalize("NFKC", ch).upper()


def split_options(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Return (stem, options). Options must run A, B, C, ... consecutively; none found -> (text, ())."""
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
    return "\n".join(lines[:start]).strip(), _collect_block(lines[start:], letters[start:])


def _line_letter(line: str) -> str | None:
    match = _OPTION_LINE.match(line)
    return normalize_letter(match.group(1)) if match is not None else None


def _collect_block(lines: list[str], letters: list[str | None]) -> tuple[tuple[str, str], ...]:
    """The options from a line lettered A on: lines lettered in order start options, others continue one."""
    options: list[tuple[str, list[str]]] = []
    for line, letter in zip(lines, letters, strict=True):
        expected = chr(ord("A") + len(options))
        if letter == expected:
            match = _OPTION_LINE.match(line)
            assert match is not None
            options.append((expected, [match.group(2).strip()]))
        elif line.strip():
            # A wrapped option: the text continues on the next line.
            options[-1][1].append(line.strip())
    return tuple((letter, "\n".join(parts)) for letter, parts in options)


def _split_inline(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    matches = list(_INLINE_OPTION.finditer(text))
    # Keep the last run of consecutive letters starting at A.
    best: list[re.Match[str]] = []
    run: list[re.Match[str]] = []
    for match in matches:
        letter = normalize_letter(match.group(1))
        if letter == "A":
            run = [match]
        elif run and letter == chr(ord("A") + len(run)):
            run.append(match)
        else:
            continue
        if len(run) >= 2:
            best = list(run)
    if not best:
        return text.strip(), ()
    options = []
    for i, match in enumerate(best):
        end = best[i + 1].start() if i + 1 < len(best) else len(text)
        options.append((chr(ord("A") + i), text[match.end() : end].strip()))
    if not all(body for _, body in options):
        return text.strip(), ()
    return text[: best[0].start()].strip(), tuple(options)
