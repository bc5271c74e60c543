"""Text shapes shared by the extractors: the answer line before an explanation, end-of-answer markers."""

from __future__ import annotations

import re

# "答案：X\n解析：…" (QualBench's reply shape), "【答案】X【解析】…" and English "Explanation:".
# No leading \s*: it would make the split quadratic on long runs of spaces; the head is stripped anyway.
_EXPLANATION = re.compile(
    r"(?:【\s*(?:解析|分析|详解)\s*】|(?:解析|解释|分析|理由|explanation)\s*[:：])", re.I
)
_ANSWER_WORD = re.compile(r"答案|answer", re.I)
# Markers some models write where an answer ends: GAOKAO-Bench's <eoa> (and <eoe> after its 【解析】),
# special tokens a server left in.
END_MARKERS = re.compile(r"<\|[A-Za-z_]{1,30}\|>|</?(?:eoa|eoe|eos|eot|s)>", re.I)


def answer_part(text: str) -> str:
    """The part before an explanation, when it holds an answer statement or is a short bare reply."""
    parts = _EXPLANATION.split(text, maxsplit=1)
    head = parts[0]
    if len(parts) > 1 and head.strip() and (_ANSWER_WORD.search(head) or len(head.strip()) <= 12):
        return head
    return text
