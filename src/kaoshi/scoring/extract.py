"""Answer extraction from model text: (answer, status) per question type. A first, simple version."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from kaoshi.data.model import Gold, Question, QuestionType
from kaoshi.data.options import normalize_letter

Status = Literal["ok", "unparsed", "ambiguous"]

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S)
_LETTERS = r"[A-NＡ-Ｎ](?:\s*[、,，和与及/\s]?\s*[A-NＡ-Ｎ])*"
_EXPLICIT = re.compile(
    r"(?:正确答案|答案|故选|应选|选择|选|answer\s+is|answer)\s*(?:是|为|应为|应该是)?\s*[:：]?\s*"
    rf"[（(\[【]?\s*(?:选项)?\s*({_LETTERS})(?![A-Za-z])",
    re.I,
)
_BARE = re.compile(rf"^\s*[（(\[【]?\s*({_LETTERS})\s*[）)\]】]?\s*[.。．]?\s*$")
_STANDALONE = re.compile(r"(?<![A-Za-z])([A-NＡ-Ｎ])(?![A-Za-z])")
_FALSE = re.compile(r"不正确|不对|错误|错|否|×|✗|false", re.I)
_TRUE = re.compile(r"正确|对|是|√|✓|true", re.I)


@dataclass(frozen=True)
class Extraction:
    answer: Gold
    status: Status


def strip_reasoning(text: str) -> str:
    """Drop <think>…</think> blocks (and an unterminated one) before reading the answer."""
    return _THINK.sub("", text)


def extract_answer(question: Question, text: str) -> Extraction:
    cleaned = strip_reasoning(text).strip()
    if question.type is QuestionType.OPEN:
        return Extraction(cleaned, "ok" if cleaned else "unparsed")
    if question.type is QuestionType.JUDGE:
        return _extract_judge(cleaned)
    return _extract_choice(question, cleaned)


def _letters_in(span: str, valid: set[str]) -> frozenset[str]:
    return frozenset(ch for ch in (normalize_letter(c) for c in span) if ch in valid)


def _extract_choice(question: Question, text: str) -> Extraction:
    valid = set(question.letters)
    span: str | None = None
    bare = _BARE.match(text)
    if bare:
        span = bare.group(1)
    else:
        explicit = [m.group(1) for m in _EXPLICIT.finditer(text)]
        if explicit:
            span = explicit[-1]
        else:
            standalone = _STANDALONE.search(text)
            span = standalone.group(1) if standalone else None
    letters = _letters_in(span or "", valid)
    if not letters:
        return Extraction(None, "unparsed")
    if question.type is QuestionType.SINGLE and len(letters) > 1:
        return Extraction(letters, "ambiguous")
    return Extraction(letters, "ok")


def _extract_judge(text: str) -> Extraction:
    head = text.split("\n", 1)[0] or text
    for candidate in (head, text):
        if _FALSE.search(candidate):
            return Extraction(False, "ok")
        if _TRUE.search(candidate):
            return Extraction(True, "ok")
    return Extraction(None, "unparsed")
