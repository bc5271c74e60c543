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
    parsed = [_OPTION_LINE.match(line) for line in lines]
    # The option block starts at the last line lettered A from which the letters run on in order,
    # so a stem line such as "A．某公司..." before the real options does not end the stem early.
    for start in range(len(lines) - 1, -1, -1):
        match = parsed[start]
        if match is None or normalize_letter(match.group(1)) != "A":
            continue
        options = _collect_block(lines[start:], parsed[start:])
        if options is not None and len(options) >= 2:
            stem = "\n".join(lines[:start]).strip()
            return stem, options
    return _split_inline(text)


def _collect_block(
    lines: list[str], parsed: list[re.Match[str] | None]
) -> tuple[tuple[str, str], ...] | None:
    options: list[list[str]] = []
    for line, match in zip(lines, parsed, strict=True):
        expected = chr(ord("A") + len(options))
        if match is not None and normalize_letter(match.group(1)) == expected:
            options.append([expected, match.group(2).strip()])
        elif options and line.strip():
            # A wrapped option: the text continues on the next line.
            options[-1][1] = f"{options[-1][1]}\n{line.strip()}"
        elif line.strip():
            return None
    return tuple((letter, body) for letter, body in options)


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
