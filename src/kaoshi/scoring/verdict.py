"""Reading a true/false verdict from a model's reply.

A verdict is read as a small phrase, not a keyword: an optional negation (`不`, `并非`, `没有`, `not`)
followed by a judgement word (`正确`, `错误`, `有误`, `成立`, `√`, `true`, ...), which must end where a
judgement ends (punctuation, the end of the text, `的` closing the phrase, or a following clause such
as `，因为`). So `不正确` and `有误` are false, `没有错误` is true, and `正确的做法是…` is no verdict at
all: there `正确` qualifies a noun, it does not judge the statement.

Order of trust: a bare reply (`错误`, `×`); the last explicit conclusion (`答案是：错误`,
`我的判断是：该说法错误`, `The answer is False`); the last statement about the claim itself (`题干说法有误`,
`该说法正确`); then the first unambiguous judgement word in running text.
"""

from __future__ import annotations

import re

from kaoshi.scoring.patterns import answer_part

# Judgement words. Short ones (对, 错, 是, 否, yes, no) are too common in ordinary sentences: they count only
# right after a conclusion cue or as the whole reply, and only when a sentence boundary follows.
_TRUE_WORDS = r"正确|成立|属实|无误|没错|√|✓|✔|(?<![A-Za-z])(?i:true|correct|right|valid)"
_FALSE_WORDS = r"错误|有误|有错|谬误|×|✗|✘|(?<![A-Za-z])(?i:false|incorrect|wrong|invalid)"
_SHORT_TRUE = r"对|是|(?i:yes)"
_SHORT_FALSE = r"错|否|(?i:no)"
# Negations that flip the word after them.
_NEGATION = r"(?:并不是|并非|不是|并不|绝非|不|没有|没|无|(?i:is\s+not|isn't|not))\s*"
_INTENSIFIER = (
    r"(?:(?:完全|十分|非常|确实|的确|是完全|显然|明显|(?i:entirely|completely|definitely|clearly))\s*)?"
)
# A judgement ends here: end of text, punctuation, a bracket opening an aside ("错误（理由：…）"), a closing
# 的 / 了, or a new clause.
_END = (
    r"(?=\s*(?:$|[。.!！?？,，;；:：、(（\[【)）\]】}\"”'’*\n]|的(?:\s*$|[。.!！,，;；\s])|"
    r"了|因为|因|由于|所以|because|since|as\b))"
)
_SHORT_END = r"(?=\s*(?:$|[。.!！,，;；(（\[【)）\]】\"”'’*\n]|的\s*(?:$|[。.!！,，;；])))"
_VERDICT = re.compile(
    rf"(?P<neg>{_NEGATION})?{_INTENSIFIER}(?:(?P<true>{_TRUE_WORDS}){_END}|(?P<false>{_FALSE_WORDS}){_END})"
)
_SHORT_VERDICT = re.compile(
    rf"(?P<neg>不|没)?(?:(?P<true>{_SHORT_TRUE})|(?P<false>{_SHORT_FALSE})){_SHORT_END}"
)

# What may stand between a cue and its value: a linking verb, a colon, quotes, brackets, a subject.
_LINK = re.compile(
    r"[\s:,，\"“'‘(（【\[*「]+|[】\])）」]+|应该是|应当是|应是|应为|就是|即为|是|为|(?i:is|are|would\s+be|should\s+be)\b"
)
# The claim being judged, named in the reply.
_SUBJECT = (
    r"(?:该|这种|这个|此|这一|题目|题干|题中|本题|原题|题目中的?|题干中的?|上述|以上)?"
    r"(?:说法|表述|观点|命题|描述|陈述|论述|判断)"
)
_SUBJECT_EN = r"(?i:the\s+(?:statement|claim|proposition)|this\s+(?:statement|claim)|it)"
# A conclusion cue: the reply is stating its final answer.
_CUE = re.compile(
    r"(?:最终答案|正确答案|参考答案|答案|我的判断|最终判断|判断结果|判断|结论|(?<!回)答(?=\s*[:：])|综上所述|综上|因此|所以|故而|故|总之)"
    r"|(?<![A-Za-z])(?i:final\s+answer|the\s+answer|answer|conclusion|verdict)(?![A-Za-z])"
)
_SUBJECT_CUE = re.compile(rf"{_SUBJECT}|(?<![A-Za-z]){_SUBJECT_EN}(?![A-Za-z])")
_SUBJECT_LINK = re.compile(rf"{_LINK.pattern}|{_SUBJECT}|{_SUBJECT_EN}\b")
# The question's own words ("判断该说法是否正确") are no verdict.
_QUESTION_PHRASES = re.compile(
    r"是否正确|是否错误|是否成立|正确与否|对还是错|正确还是错误|对错|(?i:true\s+or\s+false)"
)
_SENTENCE_END = re.compile(r"[。!！?？\n]|\.(?:\s|$)")
# Wrapping a bare verdict may carry: quotes, brackets, emphasis, a full stop.
_BARE_OPEN = ' \t\r\n"“(（【[*'
_BARE_CLOSE = ' \t\r\n"”)）】]*.。!！'


def _truth(match: re.Match[str] | None) -> bool | None:
    """The verdict a matched phrase states: its judgement word, flipped by a negation."""
    if match is None:
        return None
    truth = match.group("true") is not None
    return not truth if match.group("neg") else truth


def _read(text: str, pos: int, *, short: bool) -> bool | None:
    """The verdict that starts at `pos`, or None."""
    match = _VERDICT.match(text, pos)
    if match is None and short:
        match = _SHORT_VERDICT.match(text, pos)
    return _truth(match)


def _after(text: str, pos: int, link: re.Pattern[str]) -> bool | None:
    """The verdict following a cue that ends at `pos`, skipping linking words one at a time."""
    for _ in range(8):
        verdict = _read(text, pos, short=True)
        if verdict is not None:
            return verdict
        step = link.match(text, pos)
        if step is None or step.end() == pos:
            return None
        pos = step.end()
    return None


def _stated(text: str, cue: re.Pattern[str], link: re.Pattern[str]) -> bool | None:
    """The last verdict that follows one of `cue`'s matches."""
    verdicts = [v for m in cue.finditer(text) if (v := _after(text, m.end(), link)) is not None]
    return verdicts[-1] if verdicts else None


def _bare(text: str) -> bool | None:
    inner = text.lstrip(_BARE_OPEN).rstrip(_BARE_CLOSE)
    return _truth(_VERDICT.fullmatch(inner) or _SHORT_VERDICT.fullmatch(inner))


def _first_in_passing(text: str) -> bool | None:
    return _truth(_VERDICT.search(text))


def read_verdict(text: str) -> bool | None:
    """True / False as the reply states it, or None when it states neither (`text` is cleaned, NFKC)."""
    head = answer_part(text)
    for candidate in (head, text):
        verdict = _bare(candidate.strip())
        if verdict is not None:
            return verdict
    scrubbed = _QUESTION_PHRASES.sub(" ", text)
    for cue, link in ((_CUE, _SUBJECT_LINK), (_SUBJECT_CUE, _LINK)):
        verdict = _stated(scrubbed, cue, link)
        if verdict is not None:
            return verdict
    # A short verdict opening the reply ("不对。应走楼梯。"), else the first judgement in running text: later
    # mentions tend to describe the reasoning.
    first_sentence = _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
    opening = _bare(first_sentence)
    return opening if opening is not None else _first_in_passing(scrubbed)
