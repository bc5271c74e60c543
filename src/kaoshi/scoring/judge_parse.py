"""Reading the candidate's 0-10 score out of an LLM judge's reply.

Judges are asked to explain first and end with `答案1得分：10` / `答案2得分：X`, but real replies vary:
English labels, markdown, full-width digits, `[[7]]`, `7/10`, JSON, Chinese numerals, a first guess
revised later, think blocks, the scale or the output template repeated, sub-scores, counts of key points.

Every number that could be the score is a candidate, ranked by how plainly it is stated as the
candidate's (Answer 2's) score; the best tier wins, then one outside brackets, then the latest (judges
revise). The tiers:

- labelled as Answer 2's or as final: `答案2得分：6`, `Score for Answer 2: 3`, `最终得分：5`, `【总分】7分`;
- a plain score label: `得分：7`, `评分：8/10`, `Score: 6`, the second of a pair `分数：10，6`, `[[7]]`, JSON;
- given in passing: `给6分`, `得7分`, `8/10`, `6分（满分10分）`, `I'd give it a 7`;
- a bare `答案2：4` or `答案2 6分`, or a sub-score (`要点一得分：3`);
- a last line that is only a number (`7分`);
- a score quoted from the debate's first judge (`评审一给答案2的分数：6`), used only when nothing else is.

Never a candidate:

- Answer 1's (the reference's) score, also in a sentence about it (`答案1是标准答案，得10分`);
- the scale (`满分10分`, `10分制`, `0-10分`, `/10`, `full score: 10`, `本题分值12分`, `10分表示完全正确`),
  ranges, counts (`3个要点`), numbers outside 0-10;
- the output template, however filled (`答案2得分：10（X为0到10之间的数）`);
- the rubric restated: under a `评分标准：` heading, in a condition (`如果……，得10分`), or as levels
  (`完全正确得10分，部分正确得5分`);
- given the judge's prompt, whatever the reply repeats of it (see `judge_echo.PromptEchoes`): a copy with
  its context, punctuation aside (the rubric, the template, the question, the first judge's line); a
  number the prompt states outside a verdict, restated with the prompt's words for it; its example of a
  reply.

No candidate left: `unparsed`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from kaoshi.scoring.judge_echo import PromptEchoes, rubric_spans
from kaoshi.scoring.judge_terms import (
    ANSWER_ONE,
    ANSWER_TWO,
    CANDIDATE_MENTION,
    MAX_SCORE,
    SCALE,
    SCORE_WORD,
    SENTENCE_END,
    TIER_ANSWER_TWO,
    TIER_GIVEN,
    TIER_LABELLED,
    TIER_LAST_LINE,
    TIER_OTHER_JUDGE,
    TIER_PASSING,
    Candidate,
    after_list_item,
)

__all__ = ["MAX_SCORE", "JudgeScore", "parse_judge_score"]

# A number that is not the start of a longer one and not a count or a date (`3个要点`, `1949年`).
_UNITS = (
    r"个|条|项|处|步|年|月|日|号|%|倍|次|种|句|段|位|名|章|节|页|行|字|元|岁|人|点|分钟"
    r"|(?:key\s+)?points?\s+(?:are|were|of|in)\b|reasons?\b|steps?\b|ways?\b|aspects?\b|key\s+points?\b"
    r"|th\b|st\b|nd\b|rd\b"
)
_NUM = r"(\d+(?:\.\d+)?)(?!\.?\d)(?!\s*(?:" + _UNITS + "))"
_FINAL_WORD = (
    r"(?:最终得分|最终分数|最终评分|综合得分|综合评分|总得分|【总分】|总分(?=\s*[:=])"
    r"|(?:final|overall|total)\s+(?:score|rating|grade))"
)
# between a label and its number: a short bracket (`Score (0-10): 7`), a copula or a colon.
_IS = r"(?:\s*\([^()\n]{0,16}\))?(?:\s*(?:为|是|应为|应该是|可以给|:|=|is|of))*\s*(?:给予|给)?\s*"
_CLAUSE_END = "。！？!?;；\n,，"

_THINK = re.compile(r"<think>.*?</think>|^.*?</think>|<think>.*$", re.DOTALL)
_MARKUP = re.compile(r"\*+|__|`|#+ ")
_CN_DIGITS = dict(zip("零一二两三四五六七八九", (0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
# `七分` -> `7分` only right before 分, and not `十分准确` (very) or `三分之一` (a third).
_CN_SCORE = re.compile(
    r"(十|[一二两三四五六七八九]十?|零)(?:点([一二三四五六七八九]))?"
    r"(?=\s*分(?!之|准|精|明|清|重|详|完|全|合|到|好|差|低|高|简|有|必|正|严|充|丰|贴|恰|相|接|符|出|满意))"
)

# (tier, pattern); group 1 (or the last group) is the score.
_PATTERNS: tuple[tuple[int, re.Pattern[str]], ...] = tuple(
    (tier, re.compile(pattern, re.IGNORECASE | re.MULTILINE))
    for tier, pattern in (
        (TIER_ANSWER_TWO, ANSWER_TWO + r"\s*(?:的)?\s*(?:最终)?\s*" + SCORE_WORD + _IS + _NUM),
        (TIER_ANSWER_TWO, r"(?:score|rating|grade)\s+(?:for|of)\s+" + ANSWER_TWO + _IS + _NUM),
        (TIER_ANSWER_TWO, _FINAL_WORD + _IS + _NUM),
        (TIER_LABELLED, ANSWER_TWO + r"[^。;；\n\d]{0,8}?(?:给予?|打|得|评为?|获得)\s*" + _NUM + r"\s*分"),
        (TIER_LABELLED, r"给\s*" + ANSWER_TWO + r"\s*(?:打|评)?\s*" + _NUM + r"\s*分"),
        (TIER_LABELLED, SCORE_WORD + _IS + _NUM),
        (TIER_LABELLED, r"\[\[\s*" + _NUM + r"\s*\]\]"),
        (TIER_GIVEN, r"(?:给予?|给了|打了?|得了?|评为?|获得|拿到)\s*" + _NUM + r"\s*分"),
        (TIER_GIVEN, _NUM + r"\s*(?:分|points?)?\s*(?:/|out\s+of)\s*10(?!\.?\d)"),
        (TIER_GIVEN, _NUM + r"\s*分\s*\(\s*满分"),
        (
            TIER_GIVEN,
            r"(?:give|assign|award)s?\s+(?:it|this(?:\s+answer|\s+response)?|the\s+(?:answer|response))"
            r"\s+(?:a\s+)?(?:score\s+of\s+)?" + _NUM,
        ),
        (TIER_GIVEN, r"(?:gets|earns|receives|deserves)\s+(?:a\s+)?(?:score\s+of\s+)?" + _NUM),
        (TIER_PASSING, ANSWER_TWO + r"\s*(?:[:=]|为|是)\s*" + _NUM),
        (TIER_PASSING, ANSWER_TWO + r"\s+" + _NUM + r"\s*分"),
        (TIER_LAST_LINE, r"^\s*" + _NUM + r"\s*(?:分|points?)?\s*[.。]?\s*\Z"),
    )
)
# The pair the careful prompt asks for (`分数：10，6`, `Scores: 10, 6`): Answer 1 first, the candidate second.
_PAIR = re.compile(
    r"(?:分数|得分|评分|scores?)\s*(?:分别)?\s*(?:为|是|:)*\s*"
    + _NUM
    + r"\s*分?\s*(?:,|、|和|and)\s*"
    + _NUM,
    re.IGNORECASE,
)
_OWNED_BY_ONE = re.compile(ANSWER_ONE + r"\s*(?:的)?\s*(?:" + SCORE_WORD + r")?\s*(?:[:=]|为|是)?\s*$", re.I)
_MENTIONS_ONE, _MENTIONS_TWO = (re.compile(a, re.IGNORECASE) for a in (ANSWER_ONE, ANSWER_TWO))
_SUB_SCORE = re.compile(
    r"(?:要点|第\s*[\d一二三四五六七八九十]+\s*(?:点|问|步|项|条|部分)|部分|方面|步骤|准确性|完整性|逻辑性|表达"
    r"|point|part|step|criterion|aspect|accuracy|completeness|clarity)"
    r"\s*(?:\d+|[一二三四五六七八九十]+)?\s*(?:的)?\s*$",
    re.IGNORECASE,
)
_OTHER_JUDGE = re.compile(
    r"评审一|评审1|另一位阅卷老师|第一位(?:阅卷老师|评审)|原评分|原分数|(?:first|other|previous)\s+judge"
    r"|judge\s*(?:1|one)\b|reviewer\s*(?:1|one)\b",
    re.IGNORECASE,
)
_JSON = re.compile(r"\{[^{}]*\}")
_JSON_KEYS = (
    (
        TIER_ANSWER_TWO,
        ("answer2", "answer_2", "answer2_score", "answer_2_score", "score2", "score_2", "答案2"),
    ),
    (
        TIER_ANSWER_TWO,
        ("candidate", "candidate_score", "final_score", "finalscore", "答案2得分", "最终得分"),
    ),
    (TIER_LABELLED, ("score", "rating", "得分", "分数", "评分")),
)
# A sentence whose subject is Answer 1 is judged as a whole.
_ANSWER_ONE_SUBJECT = re.compile(r"(?:the\s+)?" + ANSWER_ONE, re.IGNORECASE)
_REFERENCE_WORD = re.compile(
    r"标准答案|参考答案|正确答案|完全正确|视为正确|满分|reference|standard|correct|full\s+marks|perfect"
    r"|model\s+answer",
    re.IGNORECASE,
)
_MENTIONS_CANDIDATE = re.compile(CANDIDATE_MENTION, re.IGNORECASE)


@dataclass(frozen=True)
class JudgeScore:
    """The candidate's score on 0-10, or None with status `unparsed`."""

    score: float | None
    status: str  # ok / unparsed

    @property
    def fraction(self) -> float | None:
        return None if self.score is None else self.score / MAX_SCORE


def _normalise(text: str, drop_thinking: bool = True) -> str:
    if drop_thinking:
        text = _THINK.sub("", text)
    text = unicodedata.normalize("NFKC", text)  # full-width digits, colons, brackets and letters
    text = _MARKUP.sub("", text)
    return _CN_SCORE.sub(_chinese_number, text)


def _chinese_number(match: re.Match[str]) -> str:
    whole, tenth = match.group(1), match.group(2)
    if whole == "十":
        value = 10
    elif whole.endswith("十"):
        value = _CN_DIGITS[whole[0]] * 10
    else:
        value = _CN_DIGITS[whole]
    return f"{value}.{_CN_DIGITS[tenth]}" if tenth else str(value)


def _in_brackets(text: str, position: int) -> int | None:
    """Where the innermost bracket still open at `position` opens, or None."""
    opened: list[int] = []
    for index in range(position):
        if text[index] == "(":
            opened.append(index)
        elif text[index] == ")" and opened:
            opened.pop()
    return opened[-1] if opened else None


def _clause_before(text: str, position: int) -> str:
    start = max(text.rfind(mark, 0, position) for mark in _CLAUSE_END) + 1
    return text[start:position]


def _sentence_starts(text: str) -> list[int]:
    return [0, *(m.end() for m in SENTENCE_END.finditer(text))]


def _about_answer_one(sentence: str) -> bool:
    """`答案1是标准答案，得10分`, `Answer 1 is the reference, with a score of 10`: a sentence (up to the
    number) whose subject is Answer 1, called the reference or correct, that names no candidate."""
    rest = after_list_item(sentence)
    subject = _ANSWER_ONE_SUBJECT.match(rest)
    return bool(
        subject and _REFERENCE_WORD.search(rest, subject.end()) and not _MENTIONS_CANDIDATE.search(rest)
    )


def _belongs_to_answer_one(text: str, label_start: int, number_start: int, sentence: int) -> bool:
    """`答案1得分：10`, `Answer 1: 10/10`, `答案1（标准答案，……得10分）`, `答案1是标准答案，得10分`: the
    reference's score."""
    if _OWNED_BY_ONE.search(text[max(0, label_start - 16) : label_start]):
        return True
    if _OWNED_BY_ONE.search(text[max(0, number_start - 16) : number_start]):
        return True
    if _about_answer_one(text[sentence:number_start]):
        return True
    bracket = _in_brackets(text, number_start)
    if bracket is None:
        return False
    inside = text[bracket + 1 : number_start]
    if _OWNED_BY_ONE.search(text[max(0, bracket - 16) : bracket]):
        return True
    return bool(_MENTIONS_ONE.search(inside)) and not _MENTIONS_TWO.search(inside)


def _pattern_candidates(text: str) -> Iterator[tuple[int, re.Match[str], int]]:
    """(tier, match, index of the score's group) for every pattern match."""
    for tier, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            yield tier, match, match.lastindex or 1
    for match in _PAIR.finditer(text):
        yield TIER_LABELLED, match, 2


def _json_candidates(text: str) -> Iterator[Candidate]:
    for blob in _JSON.finditer(text):
        try:
            value = json.loads(blob.group())
        except ValueError:
            continue
        if not isinstance(value, dict):
            continue
        lowered = {str(k).lower().replace(" ", ""): v for k, v in value.items()}
        for tier, keys in _JSON_KEYS:
            number = next((lowered[k] for k in keys if k in lowered), None)
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                yield Candidate(float(number), blob.start(), blob.end(), tier, blob.start())
                break


def _candidates(text: str, echoes: PromptEchoes | None) -> list[Candidate]:
    not_scores = [m.span() for m in SCALE.finditer(text)] + rubric_spans(text)
    sentences = _sentence_starts(text)
    pair_firsts = {m.span(1) for m in _PAIR.finditer(text)}
    best: dict[tuple[int, int], Candidate] = {}
    for tier, match, group in _pattern_candidates(text):
        start, end = match.span(group)
        if (start, end) in pair_firsts or any(s <= start and end <= e for s, e in not_scores):
            continue
        sentence = sentences[bisect_right(sentences, start) - 1]
        if _belongs_to_answer_one(text, match.start(), start, sentence):
            continue
        clause = _clause_before(text, match.start())
        if _OTHER_JUDGE.search(clause):
            tier = TIER_OTHER_JUDGE
        elif tier == TIER_LABELLED and _SUB_SCORE.search(clause):
            tier = TIER_PASSING
        in_brackets = _in_brackets(text, start) is not None
        statement = min(match.start(), start)
        candidate = Candidate(float(match.group(group)), start, end, tier, statement, in_brackets)
        if echoes is not None and echoes.echoed(text, candidate, sentence):
            continue
        if (start, end) not in best or best[start, end].tier < tier:
            best[start, end] = candidate
    return [*best.values(), *_json_candidates(text)]


def parse_judge_score(reply: str, prompt: str | None = None, max_score: float = MAX_SCORE) -> JudgeScore:
    """The candidate's score from a judge reply (see the module docstring for the rules).

    prompt: the text the judge was sent; what the reply repeats of it is not a score.
    max_score: numbers above it are not scores (10 on kaoshi's own scale; a points scale reads higher).
    """
    text = _normalise(reply)
    echoes = None
    if prompt:
        prompt_text = _normalise(prompt, drop_thinking=False)
        echoes = PromptEchoes(text, prompt_text, _candidates(prompt_text, None))
    valid = [c for c in _candidates(text, echoes) if 0 <= c.score <= max_score]
    if not valid:
        return JudgeScore(None, "unparsed")
    best = max(valid, key=lambda c: (c.tier, not c.in_brackets, c.start))
    return JudgeScore(best.score, "ok")
