"""Cloze (填空题): the missing text, several blanks separated by ';' (AGIEval's gaokao-mathcloze).

The gold answer is the reference text as the data file writes it. An answer is correct when it has as many
blanks as the reference and every blank equals its reference blank once both are written the way
`normalize_blank` writes them; the question's points are all or nothing. Answers are always generated:
there are no candidates to rank.

Normalisation, applied alike to the reference and the answer, blank by blank: NFKC (full-width letters,
digits and punctuation become half-width, '；' -> ';'), a final '。' or '.' removed, then
`kaoshi.scoring.math_answer.normalize_math_answer`, which is as lenient as AGIEval's own math-equivalence
check: '$' signs, '\\boxed{}', units in '\\text{}', degrees and spaces go, '\\frac12' is '\\frac{1}{2}', '1/2'
and '0.5' are '\\frac{1}{2}', 'x=3' is '3'. Nothing is computed: '0.25' and '\\frac{1}{4}' stay different.

Reading the blanks of a reply: they are separated by ';' (the prompt asks for it); a reply that writes the
blanks of a several-blank question as '2, 5', '2，5' or '2和5' is split there when that gives exactly as
many blanks as the reference has (never inside brackets, nor at a thousands separator: '(1, 2)' and
'1,000' stay one blank), and labelled blanks ('第一空：2；第二空：5', '第一空答案：2，第二空答案：5')
are read in order.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from typing import TYPE_CHECKING

from kaoshi.data.answers import parse_reference_answer
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Gold, Question, QuestionType
from kaoshi.qtypes.kind import QuestionKind, Wording
from kaoshi.qtypes.shared import answer_then_explanation, compiled
from kaoshi.scoring.grade import Grade, GradingPolicy

# answer extraction and the math normalisation are imported where an answer is read or a blank compared
# (see kaoshi.qtypes.kind)
if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction

BLANK_SEPARATOR = ";"  # after NFKC, which also turns the full-width '；' into ';'
_BLANKS = re.compile(r"(?<!\\)[;；]")  # '\;' is LaTeX's thick space, not a separator
# Separators a reply may write between blanks instead of ';' (full-width forms are NFKC'd or listed).
_LOOSE_SEPARATORS = frozenset(",，和")
_OPENING = frozenset("([{（【")
_CLOSING = frozenset(")]}）】")
_THOUSANDS = re.compile(r"\d{3}(?!\d)")
# The larger patterns that read a reply are sources, compiled where one is read (shared.compiled).
# '第一空：', '第2个空的答案为', '第一空填', 'Blank 1:' (NFKC text).
_BLANK_LABEL = (
    r"第[ \t]*([一二三四五六七八九十]|\d{1,2})[ \t]*个?[ \t]*空"
    r"[ \t]*的?(?:答案|填)?[ \t]*(?:应为|为|是)?[ \t]*:?"
    r"|\b(?i:blank)[ \t]*(\d{1,2})[ \t]*:"
)
_CHINESE_ORDINALS = "一二三四五六七八九十"
# The patterns below read NFKC text ('：' is ':', '，' is ','). A base model that writes on starts the next
# question the way the prompt wrote this one ('问题：', '问题 2.   ', 'Q:', 'Problem 2.').
_NEXT_QUESTION = r"(?m)^[ \t]*(?:问题[ \t]*(?:\d+[ \t]*)?[.:]|题目[ \t]*:|Problem[ \t]+\d+\.|Q:)"
# '答案：', '答案是', '最终答案为', '【答案】', 'The answer is', 'Final answer:'.
_STATED = (
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
_PROSE = r"(?:[A-Za-z]{2,}[ ,]+){2}[A-Za-z]{2,}|[\u4e00-\u9fff]{8}"


def split_blanks(text: str) -> list[str]:
    """The blanks of a reference or an answer, in order."""
    return [blank.strip() for blank in _BLANKS.split(text)]


def answer_blanks(answer: str, blanks: int) -> list[str]:
    """The blanks of an answer to a question with `blanks` blanks: split at ';', else, when the question
    has several, at top-level ',' / '，' / '和' if that gives exactly `blanks` non-empty ones."""
    parts = split_blanks(answer)
    if blanks > 1 and len(parts) == 1:
        loose = _split_top_level(answer)
        if len(loose) == blanks and all(loose):
            return loose
    return parts


def _split_top_level(text: str) -> list[str]:
    """`text` split at the loose separators outside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for position, char in enumerate(text):
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING:
            depth = max(depth - 1, 0)
        elif char in _LOOSE_SEPARATORS and depth == 0 and not _joins_one_value(text, position):
            parts.append(text[start:position].strip())
            start = position + 1
    parts.append(text[start:].strip())
    return parts


def _joins_one_value(text: str, position: int) -> bool:
    """Whether the comma at `position` is part of one value: a thousands separator or LaTeX's '\\,'."""
    if text[position] == "和":
        return False
    if position > 0 and text[position - 1] == "\\":
        return True
    return position > 0 and text[position - 1].isdigit() and _THOUSANDS.match(text, position + 1) is not None


def normalize_blank(blank: str) -> str:
    """One blank as it is compared (module docstring)."""
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.math_answer import normalize_math_answer

    text = unicodedata.normalize("NFKC", blank).strip().rstrip("。.").strip()
    return normalize_math_answer(text)


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
    given = [normalize_blank(blank) for blank in answer_blanks(answer, len(wanted))]
    correct = given == wanted
    return Grade(correct, question.points if correct else 0.0)


def read_cloze(question: Question, text: str, prompt: str | None) -> Extraction:
    """The last answer statement or final \\boxed{} value, else a one-line reply (think blocks, an echoed
    prompt and a following question a base model writes on are left out first)."""
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.extract import Extraction, clean_output

    cleaned = clean_output(text, prompt)
    following = compiled(_NEXT_QUESTION).search(cleaned, 1)
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
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.patterns import answer_part

    blanks = len(split_blanks(question.answer)) if isinstance(question.answer, str) else 1
    labels = list(compiled(_BLANK_LABEL).finditer(text))
    # '第一空答案：' holds a statement cue ('答案：') that is part of the label, not a statement.
    starts = [label.start() for label in labels]
    statements = [m for m in compiled(_STATED).finditer(text) if not _within(labels, starts, m.start())]
    boxes = _boxed_values(text)
    stated_at = statements[-1].end() if statements else -1
    boxed_at = boxes[-1][0] if boxes else -1
    labelled = _labelled_blanks(text, labels, blanks)
    if labelled is not None and labelled[0] >= stated_at and boxed_at < labelled[1]:
        return BLANK_SEPARATOR.join(labelled[2])
    if boxes and boxed_at >= stated_at:
        # Several boxes after the last statement stand for the blanks in order ('\\boxed{2}，\\boxed{5}').
        last = [value for start, value in boxes if start >= stated_at][-blanks:]
        return BLANK_SEPARATOR.join(last) if len(last) == blanks else last[-1]
    if statements:
        rest = text[stated_at:]
        line = rest.split("\n", 1)[0].strip()
        if not line:  # '答案：' on its own line, the answer on the next
            line = next((part.strip() for part in rest.split("\n") if part.strip()), "")
        stated = _STATEMENT_END.split(answer_part(line), maxsplit=1)[0].strip()
        return _joined_blanks(stated, blanks) or None
    first = answer_part(text).strip().split("\n\n", 1)[0].strip()
    if "\n" in first or len(first) > _MAX_BARE_CHARS or first.endswith(":"):
        return None
    if compiled(_PROSE).search(_LATEX_COMMAND.sub(" ", first)):
        return None
    return _joined_blanks(first, blanks) or None


def _joined_blanks(answer: str, blanks: int) -> str:
    """`answer` with its blanks separated by ';' ('2, 5' for two blanks is '2;5')."""
    parts = answer_blanks(answer, blanks)
    return BLANK_SEPARATOR.join(parts) if len(parts) == blanks > 1 and ";" not in answer else answer


def _labelled_blanks(
    text: str, labels: list[re.Match[str]], blanks: int
) -> tuple[int, int, list[str]] | None:
    """(start, end, values) of the last run of labels '第一空…', '第二空…', … that names every blank in
    order; each value runs to the next label or the end of its line."""
    if blanks < 2:
        return None
    for first in range(len(labels) - blanks, -1, -1):
        run = labels[first : first + blanks]
        if [_ordinal(label) for label in run] != list(range(1, blanks + 1)):
            continue
        values: list[str] = []
        for index, label in enumerate(run):
            stop = run[index + 1].start() if index + 1 < len(run) else len(text)
            value = text[label.end() : stop].strip().split("\n", 1)[0]
            value = _STATEMENT_END.split(value, maxsplit=1)[0].strip().rstrip(";,。. \t")
            values.append(value)
        if not all(values):
            return None
        line_end = text.find("\n", run[-1].end())
        return run[0].start(), len(text) if line_end < 0 else line_end, values
    return None


def _within(labels: list[re.Match[str]], starts: list[int], position: int) -> bool:
    """Whether `position` lies inside one of `labels` (in text order; `starts` are their starts)."""
    index = bisect.bisect_right(starts, position) - 1
    return index >= 0 and position < labels[index].end()


def _ordinal(label: re.Match[str]) -> int:
    number = label.group(1) or label.group(2)
    return int(number) if number.isdigit() else _CHINESE_ORDINALS.index(number) + 1


def _boxed_values(text: str) -> list[tuple[int, str]]:
    """(start, content) of each \\boxed{...} whose braces close, found in one pass over the text."""
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.math_answer import closing_braces

    boxes = list(_BOXED.finditer(text))
    if not boxes:
        return []
    closing = closing_braces(text)
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
        exam_style=(
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
