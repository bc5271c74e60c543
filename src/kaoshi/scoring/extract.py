"""Answer extraction from model text: one extractor per question type, returning (answer, status).

Order of trust, for every type: an explicit final-answer statement (the last one wins, so a distractor
mentioned in the reasoning is not taken), then a bare reply ("B", "（B）", "正确"), then guarded
fallbacks. What cannot be read is `unparsed`; several conflicting candidates without a final statement
are `ambiguous`. Neither is ever silently scored as a chosen answer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Literal

from kaoshi.data.model import Gold, Question
from kaoshi.scoring.patterns import END_MARKERS, answer_part
from kaoshi.scoring.verdict import read_verdict

Status = Literal["ok", "unparsed", "ambiguous"]


@dataclass(frozen=True)
class Extraction:
    answer: Gold
    status: Status


# -- cleaning --------------------------------------------------------------------------------------------
_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.I)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.I)


def strip_reasoning(text: str) -> str:
    """Drop <think>…</think> blocks. An unterminated block has no answer after it, so it is dropped to the
    end; a lone </think> (templates that open the block in the prompt) drops everything before it."""
    text = _THINK_BLOCK.sub("", text)
    close = list(_THINK_CLOSE.finditer(text))
    if close:
        text = text[close[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def strip_echo(text: str, prompt: str | None) -> str:
    """Remove a repeat of the prompt (base models often continue by echoing their input)."""
    if not prompt:
        return text
    stripped = text.lstrip()
    if stripped.startswith(prompt.strip()):
        return stripped[len(prompt.strip()) :]
    # An echo of the prompt's last block (the question itself) at the start of the reply.
    tail = prompt.strip().rsplit("\n\n", 1)[-1].strip()
    if len(tail) > 8 and stripped.startswith(tail):
        return stripped[len(tail) :]
    return text


# Roman numerals (U+2160-U+2188): finance exams number statements Ⅰ, Ⅱ, … and combine them into options
# ("D. Ⅰ、Ⅱ、Ⅲ"); NFKC would make them the letters I, V, X, L, C, D, M, read as option letters.
_ROMAN_NUMERALS = re.compile("([\u2160-\u2188]+)")


def normalize_width(text: str) -> str:
    """NFKC (Ａ -> A, ： -> :), Roman numerals kept as they are."""
    # re.split with one group: the text between numerals at even places, the numerals at odd ones.
    parts = _ROMAN_NUMERALS.split(text)
    return "".join(
        part if index % 2 else unicodedata.normalize("NFKC", part) for index, part in enumerate(parts)
    )


def clean_output(text: str, prompt: str | None = None) -> str:
    """Normalise width (Ａ -> A, ： -> :) and remove reasoning blocks, prompt echoes and end markers."""
    text = strip_echo(strip_reasoning(text), prompt)
    return END_MARKERS.sub("\n", normalize_width(text)).strip()


# -- shared patterns (applied to NFKC text: full-width letters and colons are already half-width) -------
# Quantifiers are bounded so a degenerate reply ("A、A、A…" for thousands of characters, long runs of
# spaces) is read in linear time: no answer lists more than 26 letters or puts 8 characters between two.
_SEP = r"(?:[\s、,，和与及/;；&()（）]|(?i:and)){0,8}"
# An option letter. "I" followed by a lower-case word ("I think") or an apostrophe ("I'm") is the pronoun.
_L = r"(?:[A-HJ-N]|I(?!'|\s+[a-z]))"
_LETTER_SET = rf"{_L}(?:{_SEP}{_L}){{0,25}}"
_NOT_WORD = r"(?![A-Za-z])"
_OPEN = r"[\s(\[【{<\"'“‘*]{0,16}"
# Conclusion cues, longest first: "正确的是/有", "正确选项有", "【答案】" state the answer as "答案：" does.
_CUE_ZH = (
    r"(?:(?<!回)答(?=\s*:)|最终答案|正确答案|参考答案|标准答案|答案|"
    r"正确的选项|正确的答案|正确选项|正确的项|正确项|正确的|"
    r"符合题意的选项|符合题意的|应选的选项|应选的|故选|故应选|所以选|因此选|因而选|应选择|应选|应当选|"
    r"应该选|应该是|应当是|我选|选择|选)"
)
_CUE_EN = (
    r"(?:final answers?|correct answers?|the answers?|answers?|correct options?|correct choices?|option|"
    r"(?:I\s+)?(?:would\s+)?(?:choose|pick|select|go\s+with))"
)
_BOXED = r"\\boxed\s*"
# What may follow a cue before the letters: a linking verb, a colon, markdown emphasis, a closing bracket.
_BE = r"(?:\s*(?:是|为|应为|应该是|应是|就是|而是|有|选|:|\*+|】|\]|」|is|are|would be|should be)\s*)*"
_OPTION_WORD = r"(?:选项|option)?\s*"
# The larger patterns below are sources, compiled on first use (_compiled): compiling them took about
# 4 ms of every command's start (kaoshi.qtypes imports this module), and only reading a reply uses them.
# Only the cue words are case-insensitive: option letters must be capitals ("the answer is a bit…").
_EXPLICIT = (
    rf"(?:(?<![不非])(?:{_CUE_ZH})|\b(?i:{_CUE_EN})\b|{_BOXED})(?i:{_BE}){_OPEN}(?i:{_OPTION_WORD})"
    rf"({_LETTER_SET}){_NOT_WORD}"
)
# "B选项正确", "选项B是正确的", "AD两项正确", "A、C都对" (without negation).
_STATED_CORRECT = (
    rf"(?:选项\s*({_LETTER_SET})|(?<![A-Za-z])({_LETTER_SET})\s*(?:[两二三四五六七]个?)?(?:选项|项)?)"
    r"\s*(?:的说法|说法|表述)?\s*(?:都|均|皆|也)?\s*(?:是|为)?\s*(?<!不)(?:正确|对(?![应于比照待象]))(?!与否)"
)
_STANDALONE = re.compile(rf"(?<![A-Za-z0-9_]){_L}(?![A-Za-z0-9_])")
_BARE = (
    rf"^{_OPEN}(?i:选项|option|answer|答案|答)?\s*:?\s*{_OPEN}({_LETTER_SET})[\s)\]】}}>\"'”’.。．,，!！*]*$"
)
_LOWER_EXPLICIT = rf"(?i)(?:{_CUE_ZH}|\b{_CUE_EN}\b){_BE}[(\[]?([a-n])(?:[)\]]|(?=\s*(?:$|[.。,，;；])))"
# A letter the reply rules out ("不是A", "排除B") is no candidate.
_NEGATED = re.compile(rf"(?:不是|不选|并非|排除|而非|(?i:not))\s*(?:选项)?\s*{_L}{_NOT_WORD}")
_ANY_LETTER = re.compile(r"[A-N]")
# AGIEval's demos state a letter set as a Python list ("答案是 ['A', 'D']"). Such a list after an answer
# cue, or at the start of the reply, is read as its letters. Quotes are no separators elsewhere: in
# "答案：B（'C' 项错误）" the answer is B, and 'C' is what the reasoning talks about.
_QUOTED_LETTER = r"(?:'[A-N]'|\"[A-N]\")"
_LETTER_LIST = (
    rf"(^\s*|(?:(?<![不非])(?:{_CUE_ZH})|\b(?i:{_CUE_EN})\b)(?i:{_BE}))"
    rf"\[\s*({_QUOTED_LETTER}(?:\s*,\s*{_QUOTED_LETTER}){{0,25}})\s*,?\s*\]"
)
_LISTED_OPTION = re.compile(r"[.．][^\n。]*")
_LISTED_LETTER = re.compile(r"(?<![A-Za-z])([A-N])[.．](?![A-Za-z0-9])")
_CLAUSE_BREAK = re.compile(r"[,，;；]")
# CJK text (not punctuation) right after a letter list starts a new clause about its last letters: a
# character between these (a pattern of this range took 1.5 ms to compile).
_CLAUSE_START = ("\u4e00", "\u9fff")


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled, once."""
    return re.compile(pattern)


def _letters(span: str, valid: frozenset[str]) -> frozenset[str]:
    """Capital letters in `span` that are options (lower-case text such as 'and' contributes none)."""
    return frozenset(ch for ch in span if ch in valid)


def _statement(span: str, valid: frozenset[str]) -> frozenset[str]:
    """The letters a statement gives; empty when it names a letter that is not an option (never guessed)."""
    named = frozenset(_ANY_LETTER.findall(span))
    return named if named and named <= valid else frozenset()


# -- choice questions --------------------------------------------------------------------------------------
def extract_single(question: Question, text: str) -> Extraction:
    valid = frozenset(question.letters)
    found = _explicit_letters(text, valid)
    if found is not None:
        if not found:
            return Extraction(None, "unparsed")
        if len(found) == 1:
            return Extraction(found, "ok")
        return Extraction(found, "ambiguous")
    stated = _stated_correct(text, valid)
    if len(stated) == 1:
        return Extraction(stated, "ok")
    by_text = _match_option_text(question, text)
    if by_text is not None:
        return Extraction(frozenset(by_text), "ok")
    # Where the reply answers before an explanation ("答案：错误\n解析：选项A…"), letters the explanation
    # names are what it discusses; only the answer part may mention the answer.
    unnegated = _NEGATED.sub(" ", answer_part(text))
    mentioned = _letters("".join(m.group(0) for m in _STANDALONE.finditer(unnegated)), valid)
    if len(mentioned) == 1:
        return Extraction(mentioned, "ok")
    if len(mentioned) > 1 or len(stated) > 1:
        return Extraction(None, "ambiguous")
    return Extraction(None, "unparsed")


def extract_multi(question: Question, text: str) -> Extraction:
    valid = frozenset(question.letters)
    found = _explicit_letters(text, valid)
    if found is not None:
        return Extraction(found, "ok") if found else Extraction(None, "unparsed")
    stated = _stated_correct(text, valid)
    if stated:
        return Extraction(stated, "ok")
    return Extraction(None, "unparsed")


def _explicit_letters(text: str, valid: frozenset[str]) -> frozenset[str] | None:
    """Letters of the bare reply, else of the last explicit answer statement; None when there is neither,
    an empty set when the statement names a letter that is not an option."""
    text = _compiled(_LETTER_LIST).sub(_unquoted_letters, text)
    head = answer_part(text)
    # A bare reply, or a bare first line (a base model that answers, then writes on), is the answer.
    first_line = text.split("\n", 1)[0]
    for candidate in (head, first_line):
        bare = _compiled(_BARE).match(candidate.strip())
        if bare:
            return _statement(bare.group(1), valid)
    text = _NEGATED.sub(" ", text)
    head = _NEGATED.sub(" ", head)
    for source in (head, text) if head is not text else (text,):
        matches = list(_compiled(_EXPLICIT).finditer(source))
        if matches:
            return _statement(_own_clause(source, matches[-1]), valid)
        lower = list(_compiled(_LOWER_EXPLICIT).finditer(source))
        if lower:
            return _statement(lower[-1].group(1).upper(), valid)
    return None


def _unquoted_letters(listed: re.Match[str]) -> str:
    """An answer given as a Python list of letters, written as a plain letter set ("答案是 A、D")."""
    return listed.group(1) + "、".join(_ANY_LETTER.findall(listed.group(2)))


def _own_clause(source: str, match: re.Match[str]) -> str:
    """The letters of an answer statement without a following clause about other letters: in
    "正确选项为C，A、B导电" the letters after the comma are the subject of "导电", not part of the answer."""
    span = match.group(1)
    rest = source[match.end() :]
    # "答案：A（K部门的…）", "答案：B（A股）": a bracket that opens after the letters and does not close right
    # after its own letters holds the option's text; its capitals are words, not more letters.
    opened = span.rfind("(")
    if opened > 0 and ")" not in span[opened:] and not rest.lstrip().startswith(")"):
        span = span[:opened]
    listed = _LISTED_OPTION.match(rest)
    if listed:
        # "答案为：A.可燃物 B.助燃物 C.点火源": letters given with their option texts, up to the sentence end.
        return span + "".join(_LISTED_LETTER.findall(listed.group(0)))
    follows = rest.lstrip()[:1]
    if follows and _CLAUSE_START[0] <= follows <= _CLAUSE_START[1]:
        groups = _CLAUSE_BREAK.split(span)
        if len(groups) > 1:
            return "".join(groups[:-1])
    return span


def _stated_correct(text: str, valid: frozenset[str]) -> frozenset[str]:
    """Letters the reply calls correct; a statement naming a letter that is not an option counts for none."""
    found: frozenset[str] = frozenset()
    for match in _compiled(_STATED_CORRECT).finditer(text):
        found |= _statement(match.group(1) or match.group(2), valid)
    return found


def _match_option_text(question: Question, text: str) -> str | None:
    """The letter whose option text the reply gives, when exactly one option's text appears in it."""
    reply = text.strip().rstrip("。.！!")
    options = [(letter, normalize_width(body).strip()) for letter, body in question.options]
    exact = [letter for letter, body in options if body and reply == body]
    if len(exact) == 1:
        return exact[0]
    contained = [(letter, body) for letter, body in options if len(body) >= 2 and body in reply]
    # Drop options whose text is part of another matched option's text ("二氧化碳" inside "二氧化碳灭火器").
    maximal = [
        (letter, body)
        for letter, body in contained
        if not any(body != other and body in other for _, other in contained)
    ]
    if len(maximal) == 1:
        return maximal[0][0]
    return None


# -- true/false --------------------------------------------------------------------------------------------
def extract_judge(text: str) -> Extraction:
    verdict = read_verdict(text)
    return Extraction(None, "unparsed") if verdict is None else Extraction(verdict, "ok")


# -- open answers ------------------------------------------------------------------------------------------
def extract_open(text: str) -> Extraction:
    return Extraction(text, "ok" if text else "unparsed")
