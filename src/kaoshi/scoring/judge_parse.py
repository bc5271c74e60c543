"""Reading the candidate's 0-10 score out of an LLM judge's reply.

Judges are asked to explain first and end with `答案1得分：10` / `答案2得分：X`, but real replies vary:
English labels, markdown, full-width digits, `[[7]]`, `7/10`, JSON, Chinese numerals, a first guess
revised later, think blocks. The rules, in order: a score labelled as Answer 2's (the candidate's); a
score labelled final or plain `得分`/`score` that is not Answer 1's; `[[X]]`; JSON; a lone `X/10`. The
last such statement wins, since judges revise. Anything outside 0-10 or absent is `unparsed`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

MAX_SCORE = 10.0
_NUM = r"(\d+(?:\.\d+)?)"
_CN_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_THINK = re.compile(r"<think>.*?</think>|^.*?</think>", re.DOTALL)
_MARKUP = re.compile(r"\*\*|__|`|#+ ")
_CN_SCORE = re.compile(r"(十|[一二两三四五六七八九]十?|零)(?:点([一二三四五六七八九]))?(?=\s*分)")
_SEP = (
    r"\s*(?:的)?\s*(?:最终)?\s*(?:得分|分数|评分|打分|score|rating|grade)?"
    r"\s*(?:为|是|应为|给|给予|[:：=])?\s*"
)
_SECOND = re.compile(
    r"(?:答案|回答|候选答案|answer|response)\s*(?:2|二|B|two)(?![\d.])"
    + _SEP
    + _NUM
    + r"(?:\s*(?:/|out of)\s*10)?",
    re.IGNORECASE,
)
_FIRST_LABEL = re.compile(
    r"(?:答案|回答|answer|response)\s*(?:1|一|A|one)(?![\d.])\s*(?:的)?\s*$", re.IGNORECASE
)
_LABELLED = re.compile(
    r"(?:最终得分|最终分数|最终评分|综合得分|得分|分数|评分|打分|给分|final score|score|rating|grade)"
    r"\s*(?:为|是|应为|:|：|=)?\s*(?:给予|给)?\s*" + _NUM + r"(?:\s*分|\s*(?:/|out of)\s*10)?",
    re.IGNORECASE,
)
# "两个分数：10，7" / "Scores: 10, 6": the pair the careful prompt asks for, candidate second.
_PAIR = re.compile(
    r"(?:分数|得分|评分|scores?)\s*(?:分别)?\s*(?:为|是|:|：)*\s*"
    + _NUM
    + r"\s*分?\s*(?:,|，|、|和|and)\s*"
    + _NUM
    + r"(?!\s*/)",
    re.IGNORECASE,
)
_GIVEN = re.compile(r"(?:给予?|打|得|评为?)\s*" + _NUM + r"\s*分")
_BRACKETS = re.compile(r"\[\[\s*" + _NUM + r"\s*\]\]")
_OUT_OF_TEN = re.compile(_NUM + r"\s*(?:/|out of)\s*10(?!\d)", re.IGNORECASE)
_JSON = re.compile(r"\{[^{}]*\}")
_JSON_KEYS = ("answer2", "answer_2", "score2", "答案2", "candidate", "final_score", "score", "得分")


@dataclass(frozen=True)
class JudgeScore:
    """The candidate's score on 0-10, or None with status `unparsed`."""

    score: float | None
    status: str  # ok / unparsed

    @property
    def fraction(self) -> float | None:
        return None if self.score is None else self.score / MAX_SCORE


def _normalise(text: str) -> str:
    text = _THINK.sub("", text)
    text = unicodedata.normalize("NFKC", text)  # full-width digits, colons and letters
    text = _MARKUP.sub("", text)
    return _CN_SCORE.sub(_chinese_number, text)


def _chinese_number(match: re.Match[str]) -> str:
    """`七分` -> `7分`, `十分` -> `10分` only directly before 分 (so 十分准确 is left alone below)."""
    whole, tenth = match.group(1), match.group(2)
    if whole == "十":
        value = 10
    elif whole.endswith("十"):
        value = _CN_DIGITS[whole[0]] * 10
    else:
        value = _CN_DIGITS[whole]
    return f"{value}.{_CN_DIGITS[tenth]}" if tenth else str(value)


def _valid(value: str) -> float | None:
    score = float(value)
    return score if 0 <= score <= MAX_SCORE else None


def _last_valid(values: list[str]) -> float | None:
    for value in reversed(values):
        score = _valid(value)
        if score is not None:
            return score
    return None


def _labelled_not_first(text: str) -> list[str]:
    """Plain `得分：X` statements, leaving out those that belong to Answer 1 (the reference)."""
    kept = []
    for match in _LABELLED.finditer(text):
        before = text[max(0, match.start() - 12) : match.start()]
        if _FIRST_LABEL.search(before):
            continue
        kept.append(match.group(1))
    return kept


def _from_json(text: str) -> float | None:
    for blob in reversed(_JSON.findall(text)):
        try:
            value = json.loads(blob)
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        lowered = {str(k).lower().replace(" ", ""): v for k, v in value.items()}
        for key in _JSON_KEYS:
            number = lowered.get(key)
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                return number if 0 <= number <= MAX_SCORE else None
    return None


def parse_judge_score(reply: str) -> JudgeScore:
    """The candidate's score from a judge reply (see the module docstring for the rules)."""
    text = _normalise(reply)
    finders: tuple[Callable[[str], float | None], ...] = (
        lambda t: _last_valid(_SECOND.findall(t)),
        lambda t: _last_valid([second for _, second in _PAIR.findall(t)]),
        lambda t: _last_valid(_labelled_not_first(t)),
        lambda t: _last_valid(_BRACKETS.findall(t)),
        _from_json,
        lambda t: _last_valid(_GIVEN.findall(t)),
        lambda t: _last_valid(_OUT_OF_TEN.findall(t)),
    )
    for finder in finders:
        score = finder(text)
        if score is not None:
            return JudgeScore(score, "ok")
    return JudgeScore(None, "unparsed")
