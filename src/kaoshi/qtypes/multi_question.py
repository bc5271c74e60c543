"""Several sub-questions sharing one text (完形填空, 七选五, 阅读理解 groups): one option letter per
sub-question, in order; each sub-question earns its share of the points (GAOKAO-Bench: 1.5 points a blank
in an English cloze). The gold answer is the letters in sub-question order, e.g. "CAD"; the options stay
inside the question text, as GAOKAO-Bench writes them.

A reply is read in this order of trust: one answer marker per sub-question (`【答案】C`, GAOKAO's
format; `选B`, `The answer is C`), then one answer line with a letter per sub-question (`答案：CADBE`,
`【答案】A B D`, `The answers are C F A E D`), then numbered answers (`21. C 22. A`, `第1题选C`, `1-C`,
in number order), then any answer markers together. A reply that gives fewer letters than there are
sub-questions is `unparsed`: letters are never guessed into positions.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from kaoshi.data.errors import FieldError
from kaoshi.data.model import Gold, Question, QuestionType
from kaoshi.data.options import normalize_letter
from kaoshi.qtypes.kind import QuestionKind, Wording
from kaoshi.qtypes.shared import answer_then_explanation, compiled
from kaoshi.scoring.grade import Grade, GradingPolicy

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction

# Sub-questions choose among at most seven options (七选五: A-G).
SUB_LETTERS = "ABCDEFG"
_LETTER = r"[A-G](?![H-Za-z])"
_RUN = rf"{_LETTER}(?:[\s,，、;；/]{{0,4}}{_LETTER}){{0,30}}"
# An answer cue and the letters after it: 【答案】, 答案：, 答案是, 答案为, 选 or 选择 (这道题选B; not 不选 or
# 选项), Answer:, "the answer is", "the answers are". Applied to NFKC text. This and _NUMBERED are sources,
# compiled where a reply is read (shared.compiled).
_MARKED = (
    rf"(?:【\s*答案\s*】|答案\s*(?::|是|为|应为)|(?<![不未])选择?(?!项)|(?i:answers?\s*(?::|\s(?:is|are)\b)))"
    rf"\s*:?\s*\**\s*({_RUN})"
)
# `21. C`, `(2) 【答案】A`, `第3题选D`, `1-C`, `4)B`: a sub-question's number, then its letter.
_NUMBERED = (
    rf"(?<![\d.])(?:第\s*)?\(?(\d{{1,3}})\s*(?:题|小题|空)?\s*(?:[.、:)）\-]|选|答案\s*(?:是|为)?)\s*"
    rf"(?:【\s*答案\s*】|答案)?\s*(?:是|为|选)?\s*:?\s*\**({_LETTER})"
)
_LETTERS = re.compile(r"[A-G]")
_SEPARATORS = re.compile(r"[\s,，、;；/|]+")


def parse_sub_answers(value: object) -> str:
    """The gold letters in sub-question order from ["C", "A", "D"], "CAD" or "C A D"."""
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise FieldError("answer", f"expected a list of option letters, got {value!r}")
        text = "".join(v.strip() for v in value)
    elif isinstance(value, str):
        text = _SEPARATORS.sub("", value)
    else:
        raise FieldError("answer", f"expected option letters, got {type(value).__name__} {value!r}")
    letters = "".join(normalize_letter(ch) for ch in text)
    if not letters:
        raise FieldError("answer", "answer is empty")
    bad = [ch for ch in letters if ch not in SUB_LETTERS]
    if bad:
        raise FieldError("answer", f"answer {value!r}: {bad[0]!r} is not a letter A-G")
    if isinstance(value, list) and len(letters) != len(value):
        raise FieldError("answer", f"answer {value!r}: each sub-question takes exactly one letter")
    return letters


def sub_answers(text: str, count: int) -> str | None:
    """The `count` letters a reply gives, in sub-question order; None when it does not give them all."""
    marked = [_LETTERS.findall(m.group(1)) for m in compiled(_MARKED).finditer(text)]
    if len(marked) >= count and all(len(group) == 1 for group in marked[-count:]):
        return "".join(group[0] for group in marked[-count:])
    whole = [group for group in marked if len(group) == count]
    if whole:
        return "".join(whole[-1])
    numbered: dict[int, str] = {}
    for match in compiled(_NUMBERED).finditer(text):
        numbered[int(match.group(1))] = match.group(2)  # a later answer to the same number revises it
    if len(numbered) == count:
        return "".join(numbered[n] for n in sorted(numbered))
    flat = [letter for group in marked for letter in group]
    if len(flat) == count:
        return "".join(flat)
    return None


def read_sub_answers(question: Question, text: str, prompt: str | None) -> Extraction:
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.extract import Extraction, clean_output

    count = len(question.answer) if isinstance(question.answer, str) else 0
    cleaned = unicodedata.normalize("NFKC", clean_output(text, prompt))
    found = sub_answers(cleaned, count) if count else None
    return Extraction(found, "ok") if found is not None else Extraction(None, "unparsed")


def grade_sub_answers(question: Question, answer: Gold, policy: GradingPolicy) -> Grade:
    """Each sub-question answered right earns its share of the points; `correct` needs all of them."""
    gold = question.answer
    if not isinstance(gold, str) or not gold:
        return Grade(None, None)
    if not isinstance(answer, str) or len(answer) != len(gold):
        return Grade(False, 0.0)
    right = sum(given == wanted for given, wanted in zip(answer, gold, strict=True))
    return Grade(right == len(gold), question.points * right / len(gold))


MULTI_QUESTION = QuestionKind(
    name=QuestionType.MULTI_QUESTION.value,
    wording=Wording(
        name_zh="组合选择题",
        plain="以下题目包含若干小题，每个小题只有一个正确选项。请按小题顺序给出每个小题的答案。",
        exam_style=(
            "请回答下面的题目，它包含若干小题，每个小题只有一个正确选项。"
            "先写“答案：”和各小题的选项字母（按小题顺序，如 1.A 2.C），再在“解析：”后说明理由。"
        ),
        extractor="按小题顺序输出它为每个小题选择的选项字母，字母之间用空格分隔",
    ),
    objective=True,
    has_options=False,  # the options stay inside the question text
    ranking=None,  # every combination of sub-answers is too many to rank: answers are generated
    extract=read_sub_answers,
    grade=grade_sub_answers,
    parse_gold=parse_sub_answers,
    target=answer_then_explanation,
)
