"""Answer extraction from model text: one entry point per question type, returning (answer, status).

Order of trust, for every type: an explicit final-answer statement (the last one wins, so a distractor
mentioned in the reasoning is not taken), then a bare reply ("B", "（B）", "正确"), then guarded
fallbacks. What cannot be read is `unparsed`; several conflicting candidates without a final statement
are `ambiguous`. Neither is ever silently scored as a chosen answer.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from kaoshi.data.model import Gold, Question, QuestionType

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


def clean_output(text: str, prompt: str | None = None) -> str:
    """Normalise width (Ａ -> A, ： -> :) and remove reasoning blocks and prompt echoes."""
    text = strip_echo(strip_reasoning(text), prompt)
    return unicodedata.normalize("NFKC", text).strip()


# -- shared patterns (applied to NFKC text: full-width letters and colons are already half-width) -------
_SEP = r"(?:[\s、,，和与及/;；&()（）]|(?i:and))*"
_L = r"[A-N]"
_LETTER_SET = rf"{_L}(?:{_SEP}{_L})*"
_NOT_WORD = r"(?![A-Za-z])"
_OPEN = r"[\s(\[【{<\"'“‘]*"
_CUE_ZH = (
    r"(?:最终答案|正确答案|参考答案|答案|正确选项|故选|故应选|所以选|"
    r"因此选|因而选|应选择|应选|应当选|我选|选择|选)"
)
_CUE_EN = r"(?:final answers?|correct answers?|the answers?|answers?|correct options?|option)"
_BE = r"(?:\s*(?:是|为|应为|应该是|应是|就是|而是|选|:|is|are|would be|should be)\s*)*"
_OPTION_WORD = r"(?:选项|option)?\s*"
# Only the cue words are case-insensitive: option letters must be capitals ("the answer is a bit…").
_EXPLICIT = re.compile(
    rf"(?:(?<![不非])(?:{_CUE_ZH})|\b(?i:{_CUE_EN})\b)(?i:{_BE}){_OPEN}(?i:{_OPTION_WORD})"
    rf"({_LETTER_SET}){_NOT_WORD}"
)
# "B选项正确", "选项B是正确的", "B项正确" (without negation).
_STATED_CORRECT = re.compile(
    rf"(?:选项\s*({_L})|(?<![A-Za-z])({_L})\s*(?:选项|项)?)\s*(?:的说法|说法|表述)?\s*(?:是|为)?\s*(?<!不)(?:正确|对)(?!与否)"
)
_STANDALONE = re.compile(rf"(?<![A-Za-z0-9_]){_L}(?![A-Za-z0-9_])")
_BARE = re.compile(
    rf"^{_OPEN}(?i:选项|option|answer|答案)?\s*:?\s*{_OPEN}({_LETTER_SET})[\s)\]】}}>\"'”’.。．,，!！]*$"
)
_LOWER_EXPLICIT = re.compile(
    rf"(?:{_CUE_ZH}|\b{_CUE_EN}\b){_BE}[(\[]?([a-n])(?:[)\]]|(?=\s*(?:$|[.。,，;；])))", re.I
)
# A letter the reply rules out ("不是A", "排除B") is no candidate.
_NEGATED = re.compile(rf"(?:不是|不选|并非|排除|而非|(?i:not))\s*(?:选项)?\s*{_L}{_NOT_WORD}")
_QUALBENCH_SPLIT = re.compile(r"\n?\s*(?:解析|解释|分析|理由|explanation)\s*[:：]", re.I)


def _letters(span: str, valid: frozenset[str]) -> frozenset[str]:
    """Capital letters in `span` that are options (lower-case text such as 'and' contributes none)."""
    return frozenset(ch for ch in span if ch in valid)


def _answer_part(text: str) -> str:
    """The QualBench shape '答案：X\\n解析：…': when an answer line precedes the explanation, read it."""
    parts = _QUALBENCH_SPLIT.split(text, maxsplit=1)
    head = parts[0]
    if len(parts) > 1 and (re.search(r"(?:答案|answer)", head, re.I) or len(head.strip()) <= 12):
        return head
    return text


# -- choice questions --------------------------------------------------------------------------------------
def extract_single(question: Question, text: str) -> Extraction:
    valid = frozenset(question.letters)
    found = _explicit_letters(text, valid)
    if found is not None:
        if len(found) == 1:
            return Extraction(found, "ok")
        return Extraction(found, "ambiguous")
    stated = _stated_correct(text, valid)
    if len(stated) == 1:
        return Extraction(stated, "ok")
    by_text = _match_option_text(question, text)
    if by_text is not None:
        return Extraction(frozenset(by_text), "ok")
    mentioned = _letters("".join(m.group(0) for m in _STANDALONE.finditer(_NEGATED.sub(" ", text))), valid)
    if len(mentioned) == 1:
        return Extraction(mentioned, "ok")
    if len(mentioned) > 1 or len(stated) > 1:
        return Extraction(None, "ambiguous")
    return Extraction(None, "unparsed")


def extract_multi(question: Question, text: str) -> Extraction:
    valid = frozenset(question.letters)
    found = _explicit_letters(text, valid)
    if found:
        return Extraction(found, "ok")
    stated = _stated_correct(text, valid)
    if stated:
        return Extraction(stated, "ok")
    return Extraction(None, "unparsed")


def _explicit_letters(text: str, valid: frozenset[str]) -> frozenset[str] | None:
    """Letters of the bare reply, else of the last explicit answer statement; None when there is neither."""
    head = _answer_part(text)
    # A bare reply, or a bare first line (a base model that answers, then writes on), is the answer.
    first_line = text.split("\n", 1)[0]
    for candidate in (head, first_line):
        bare = _BARE.match(candidate.strip())
        if bare and (letters := _letters(bare.group(1), valid)):
            return letters
    text = _NEGATED.sub(" ", text)
    head = _NEGATED.sub(" ", head)
    for source in (head, text) if head is not text else (text,):
        matches = [_letters(m.group(1), valid) for m in _EXPLICIT.finditer(source)]
        matches = [m for m in matches if m]
        if matches:
            return matches[-1]
        lower = [_letters(m.group(1).upper(), valid) for m in _LOWER_EXPLICIT.finditer(source)]
        lower = [m for m in lower if m]
        if lower:
            return lower[-1]
    return None


def _stated_correct(text: str, valid: frozenset[str]) -> frozenset[str]:
    letters = "".join((m.group(1) or m.group(2)) for m in _STATED_CORRECT.finditer(text))
    return _letters(letters, valid)


def _match_option_text(question: Question, text: str) -> str | None:
    """The letter whose option text the reply gives, when exactly one option's text appears in it."""
    reply = text.strip().rstrip("。.！!")
    options = [(letter, unicodedata.normalize("NFKC", body).strip()) for letter, body in question.options]
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
_TRUE_WORDS = r"正确|对|是|√|✓|✔|true|yes|right|correct"
_FALSE_WORDS = r"不正确|不对|错误|错|否|×|✗|✘|false|no|wrong|incorrect"
_JUDGE_EXPLICIT = re.compile(
    rf"(?:答案|判断|结论|综上所述|综上|因此|所以|故|answer)\s*(?:是|为|应为|:)?\s*[\"“]?\s*"
    rf"(?:该说法|这种说法|此说法|题目说法|说法|表述|该表述)?\s*(?:是|为)?\s*({_FALSE_WORDS}|{_TRUE_WORDS})(?![A-Za-z])",
    re.I,
)
_JUDGE_BARE = re.compile(rf"^[\s\"“(（【\[]*({_FALSE_WORDS}|{_TRUE_WORDS})[\s\"”)）】\].。!！]*$", re.I)
# Inside running text only unambiguous words count: 对/是/否 are too common in ordinary sentences.
_JUDGE_WORD = re.compile(
    r"(不正确|不对|不是正确的|并不正确|错误|正确|√|✓|✔|×|✗|✘|(?<![A-Za-z])(?:true|false|incorrect|correct)(?![A-Za-z]))",
    re.I,
)
_QUESTION_PHRASES = re.compile(r"是否正确|是否错误|正确与否|对还是错|正确还是错误|对错")
_FALSE_SET = {
    "不正确",
    "不对",
    "不是正确的",
    "并不正确",
    "错误",
    "错",
    "否",
    "×",
    "✗",
    "✘",
    "false",
    "no",
    "wrong",
    "incorrect",
}


def _truth(word: str) -> bool:
    return word.lower() not in _FALSE_SET


def extract_judge(text: str) -> Extraction:
    head = _answer_part(text)
    bare = _JUDGE_BARE.match(head.strip()) or _JUDGE_BARE.match(text.strip())
    if bare:
        return Extraction(_truth(bare.group(1)), "ok")
    scrubbed = _QUESTION_PHRASES.sub(" ", text)
    explicit = [m.group(1) for m in _JUDGE_EXPLICIT.finditer(scrubbed)]
    if explicit:
        return Extraction(_truth(explicit[-1]), "ok")
    words = [m.group(1) for m in _JUDGE_WORD.finditer(scrubbed)]
    if not words:
        return Extraction(None, "unparsed")
    # The first judgement made in the reply is its verdict; later mentions tend to describe the reasoning
    # ("正确。错误的做法是……").
    return Extraction(_truth(words[0]), "ok")


# -- entry point -------------------------------------------------------------------------------------------
def extract_open(text: str) -> Extraction:
    return Extraction(text, "ok" if text else "unparsed")


def extract_answer(question: Question, text: str, prompt: str | None = None) -> Extraction:
    """Read the answer of `question` from a model's reply (`prompt`, when given, is stripped if echoed)."""
    if question.type is QuestionType.OPEN:
        # Open answers keep their own characters: graders compare them with a reference text.
        return extract_open(strip_echo(strip_reasoning(text), prompt).strip())
    cleaned = clean_output(text, prompt)
    if question.type is QuestionType.JUDGE:
        return extract_judge(cleaned)
    if question.type is QuestionType.MULTI:
        return extract_multi(question, cleaned)
    return extract_single(question, cleaned)
