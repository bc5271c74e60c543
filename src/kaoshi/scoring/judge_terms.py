"""The words and shapes of a judge's reply that both halves of reading it share: the score search
(kaoshi.scoring.judge_parse) and the detection of what merely repeats the prompt or its rubric
(kaoshi.scoring.judge_echo). Also the candidate record the search hands to that detection, and its tiers.

They live apart from both so that judge_parse can use judge_echo without judge_echo importing it back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SCORE = 10.0

ANSWER_TWO = (
    r"(?:(?:答案|回答)\s*(?:2|二|(?-i:B))(?![\d.])|候选答案|考生答案|学生答案"
    r"|(?:answer|response)\s*(?:2|two|(?-i:B))\b|(?:the\s+)?candidate(?:'s)?(?:\s+(?:answer|response))?)"
)
ANSWER_ONE = (
    r"(?:(?:答案|回答)\s*(?:1|一|(?-i:A))(?![\d.])|标准答案|参考答案"
    r"|(?:answer|response)\s*(?:1|one|(?-i:A))\b|reference(?:\s+answer)?)"
)
SCORE_WORD = r"(?:得分|分数|评分|打分|给分|\bscore|\brating|\bgrade|\bmark)"

# Scale, ranges and denominators: spans whose numbers are never the score.
SCALE = re.compile(
    r"满分\s*(?:为|是|:)?\s*\d+(?:\.\d+)?\s*分?"
    r"|\d+\s*分\s*(?:为|是)\s*满分"
    r"|\d+\s*分制"
    r"|(?:最高|最低|最多|最少)\s*(?:可|能)?\s*(?:得|给|打)?\s*(?:分|得分)?\s*(?:为|是|:)?\s*\d+\s*分?"
    r"|(?:不超过|不高于|不低于|不少于|至多|至少)\s*(?:本题分值)?\s*\d+"
    r"|(?:本题)?分值\s*】?\s*(?:为|是|:)?\s*\d+(?:\.\d+)?|本题\s*(?:共|总分|满分)?\s*\d+(?:\.\d+)?\s*分"
    r"|\d+(?:\.\d+)?\s*(?:-|~|–|—|到|至|to)\s*\d+(?:\.\d+)?"
    r"|between\s+\d+\s+and\s+\d+"
    r"|(?:/|out\s+of)\s*\d+(?:\.\d+)?"
    r"|scale\s+(?:of|from)\s+\d+"
    r"|\d+\s*-?\s*point\s+scale"
    r"|(?:(?:maximum|max|highest(?:\s+possible)?)\s*(?:score|points?|marks?)?"
    r"|(?:full|perfect|top|possible)\s+(?:score|points?|marks?))\s*(?:is|of|=|:|would\s+be)?\s*\d+"
    r"|(?:at\s+most|at\s+least|no\s+more\s+than|up\s+to)\s+\d+"
    # what a score means (`10分表示完全正确`, `a score of 10 means`): the rubric, not a verdict
    r"|\d+(?:\.\d+)?\s*(?:分|points?|marks?)?\s*(?:表示|代表|意味着|意味|对应|means?|indicates?|represents?"
    r"|signif(?:y|ies)|stands?\s+for|corresponds?\s+to)"
    # the output template with its placeholder's explanation kept (`10（X为0到10之间的数）`): however filled
    r"|\d+(?:\.\d+)?\s*分?\s*\(\s*[A-Za-z]\s*(?:为|是|表示|代表|=|:|is\b|means\b)",
    re.IGNORECASE,
)

# How plainly a candidate is stated as the candidate's score, lowest first (see judge_parse).
TIER_OTHER_JUDGE, TIER_LAST_LINE, TIER_PASSING, TIER_GIVEN, TIER_LABELLED, TIER_ANSWER_TWO = range(6)

# Where sentences end and list items start: statements are judged as a whole.
SENTENCE_END = re.compile(r"[。!?\n]|\.(?=\s|$)")
LIST_ITEM = re.compile(
    r"\s*(?:[-•·]|\(?(?:\d{1,2}|[a-zA-Z]|[一二三四五六七八九十]{1,2})[.)、](?!\d)"
    r"|\((?:\d{1,2}|[a-zA-Z]|[一二三四五六七八九十]{1,2})\))\s*"
)
# What a reply calls the candidate (`该答案`, `考生`, `the response`).
CANDIDATE_MENTION = (
    r"(?:" + ANSWER_TWO + r"|该答案|此答案|这个答案|回答(?!\s*[1一A])|答对|答错|答出|考生|学生|作答"
    r"|\b(?:the|this)\s+(?:response|student)\b|\bthis\s+answer\b)"
)


@dataclass(frozen=True)
class Candidate:
    """A number that could be the score: where the normalised reply states it, and how plainly."""

    score: float
    start: int  # the number's span in the normalised reply
    end: int
    tier: int
    statement: int  # where its statement (label and number) starts
    in_brackets: bool = False


def after_list_item(text: str) -> str:
    """The text after a leading list marker (`-`, `1.`, `(a)`, `一、`)."""
    item = LIST_ITEM.match(text)
    return text[item.end() :] if item else text
