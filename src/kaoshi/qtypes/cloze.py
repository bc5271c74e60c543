"""Cloze (填空题): the missing text, several blanks separated by ';' (AGIEval's gaokao-mathcloze).

The gold answer is the reference text as the data file writes it. An answer is correct when it has as many
blanks as the reference and every blank equals its reference blank after `normalize_blank`; the question's
points are all or nothing. Answers are always generated: there are no candidates to rank.

Normalisation, applied alike to the reference and the answer, blank by blank:
- NFKC: full-width letters, digits and punctuation become half-width ('；' -> ';', '（' -> '(');
- surrounding '$' signs are removed ('$\\frac{1}{2}$' -> '\\frac{1}{2}'), as is a final '。' or '.';
- '\\dfrac' and '\\tfrac' become '\\frac'; '\\left' / '\\right' and the spacing commands '\\!' '\\,' '\\;'
  are removed;
- all whitespace is removed.
Nothing else: '0.5' and '\\frac{1}{2}' stay different, as do 'x=3' and '3'. AGIEval's own scorer compares the
whole reply with its MATH-style `is_equiv` (src/math_equivalence.py), which is more lenient in places.
"""

from __future__ import annotations

import re
import unicodedata

from kaoshi.data.answers import parse_reference_answer
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Gold, Question, QuestionType
from kaoshi.qtypes.kind import QuestionKind, Wording
from kaoshi.qtypes.shared import answer_then_explanation
from kaoshi.scoring.extract import Extraction, clean_output
from kaoshi.scoring.grade import Grade, GradingPolicy
from kaoshi.scoring.patterns import answer_part

BLANK_SEPARATOR = ";"  # after NFKC, which also turns the full-width '；' into ';'
_BLANKS = re.compile(r"(?<!\\)[;；]")  # '\;' is LaTeX's thick space, not a separator
_LATEX_SPACING = re.compile(r"\\left|\\right|\\[!,;]")
_SPACE = re.compile(r"\s+")
# The patterns below read NFKC text ('：' is ':', '，' is ','). A base model that writes on starts the next
# question the way the prompt wrote this one ('问题：', '问题 2.   ', 'Q:', 'Problem 2.').
_NEXT_QUESTION = re.compile(
    r"^[ \t]*(?:问题[ \t]*(?:\d+[ \t]*)?[.:]|题目[ \t]*:|Problem[ \t]+\d+\.|Q:)", re.M
)
# '答案：', '答案是', '最终答案为', '【答案】', 'The answer is', 'Final answer:'.
_STATED = re.compile(
    r"(?:最终|正确|参考)?答案[ \t]*(?:(?:应该是|应为|应是|是|为)[ \t]*:?|:)|【答案】|"
    r"(?i:\b(?:final answer|the answer|answer)[ \t]*(?:is|:))"
)
# Where a stated answer ends: a sentence end, or a clause giving the reason.
_STATEMENT_END = re.compile(r"。|,[ \t]*(?:因为|所以|由于|即|because|since)")
_BOXED = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
# Replies that say there is no answer, e.g. the LLM extractor's '无'.
_NO_ANSWER = {"无", "无答案", "不知道", "无法确定", "n/a", "none"}
# A reply without an answer statement is read as the answer only when its first paragraph is one short
# line (a base model continuing '答案：'), not an opening such as '解：' and not prose: three English words
# in a row (LaTeX commands aside) or eight Chinese characters in a row.
_MAX_BARE_CHARS = 80
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_PROSE = re.compile(r"(?:[A-Za-z]{2,}[ ,]+){2}[A-Za-z]{2,}|[\u4e00-\u9fff]{8}")


def split_blanks(text: str) -> list[str]:
    """The blanks of a reference or an answer, in order."""
    return [blank.strip() for blank in _BLANKS.split(text)]


def normalize_blank(blank: str) -> str:
    """One blank as it is compared (module docstring)."""
    text = unicodedata.normalize("NFKC", blank).strip()
    text = text.rstrip("。.").strip()
    while len(text) >= 2 and text.startswith("$") and text.endswith("$"):
        text = text[1:-1].strip()
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return _SPACE.sub("", _LATEX_SPACING.sub("", text))


def parse_cloze_answer(value: object) -> str:
    """A cloze reference: non-empty text, no blank of it empty."""
    reference = parse_reference_answer(value).strip()
    if not all(normalize_blank(blank) for blank in split_blanks(reference)):
        raise FieldError("answer", f"cloze answer {reference!r} has an empty blank")
    return reference


def grade_cloze(question: Question, answer: Gold, policy: GradingPolicy) -> Grade:
    """Every blank must match its reference blank after normalisation; all or nothing."""
    gold = question.answer
    if not isinstance(answer, str) or not isinstance(gold, str):
        return Grade(False, 0.0)
    wanted = [normalize_blank(blank) for blank in split_blanks(gold)]
    given = [normalize_blank(blank) for blank in split_blanks(answer)]
    correct = given == wanted
    return Grade(correct, question.points if correct else 0.0)


def read_cloze(question: Question, text: str, prompt: str | None) -> Extraction:
    """The last answer statement or final \\boxed{} value, else a one-line reply (think blocks, an echoed
    prompt and a following question a base model writes on are left out first)."""
    cleaned = clean_output(text, prompt)
    following = _NEXT_QUESTION.search(cleaned, 1)
    if following is not None:
        cleaned = cleaned[: following.start()]
    answer = _final_answer(question, cleaned)
    if answer is None:
        return Extraction(None, "unparsed")
    answer = answer.strip().rstrip("。.,，").strip()
    if not answer or answer.lower() in _NO_ANSWER:
        return Extraction(None, "unparsed")
    return Extraction(answer, "ok")


def _final_answer(question: Question, text: str) -> str | None:
    statements = list(_STATED.finditer(text))
    boxes = _boxed_values(text)
    stated_at = statements[-1].end() if statements else -1
    boxed_at = boxes[-1][0] if boxes else -1
    if boxes and boxed_at >= stated_at:
        # Several boxes after the last statement stand for the blanks in order ('\boxed{2}，\boxed{5}').
        blanks = len(split_blanks(question.answer)) if isinstance(question.answer, str) else 1
        last = [value for start, value in boxes if start >= stated_at][-blanks:]
        return BLANK_SEPARATOR.join(last) if len(last) == blanks else last[-1]
    if statements:
        rest = text[stated_at:]
        line = rest.split("\n", 1)[0].strip()
        if not line:  # '答案：' on its own line, the answer on the next
            line = next((part.strip() for part in rest.split("\n") if part.strip()), "")
        return _STATEMENT_END.split(answer_part(line), maxsplit=1)[0].strip() or None
    first = answer_part(text).strip().split("\n\n", 1)[0].strip()
    if "\n" in first or len(first) > _MAX_BARE_CHARS or first.endswith(":"):
        return None
    if _PROSE.search(_LATEX_COMMAND.sub(" ", first)):
        return None
    return first or None


def _boxed_values(text: str) -> list[tuple[int, str]]:
    """(start, content) of each \\boxed{...} whose braces close, found in one pass over the text."""
    boxes = list(_BOXED.finditer(text))
    if not boxes:
        return []
    closing: dict[int, int] = {}
    opened: list[int] = []
    for position, char in enumerate(text):
        if char == "{":
            opened.append(position)
        elif char == "}" and opened:
            closing[opened.pop()] = position
    return [
        (box.start(), text[box.end() : closing[box.end() - 1]].strip())
        for box in boxes
        if box.end() - 1 in closing
    ]


CLOZE = QuestionKind(
    name=QuestionType.CLOZE.value,
    wording=Wording(
        name_zh="填空题",
        plain="以下是填空题，请写出空白处应填的内容；有多个空时，按顺序填写，用“;”隔开。",
        qualbench=(
            "请回答下面的填空题。先写“答案：”和所填内容（有多个空时按顺序填写，用“;”隔开），"
            "再在“解析：”后说明理由。"
        ),
        extractor="只输出它最终填写的内容，有多个空时按顺序用“;”隔开",
    ),
    objective=True,
    has_options=False,
    ranking=None,
    extract=read_cloze,
    grade=grade_cloze,
    parse_gold=parse_cloze_answer,
    target=answer_then_explanation,
)
