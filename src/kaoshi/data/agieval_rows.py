"""AGIEval's Chinese tasks and their rows: the task table, and one row (or few-shot demo) as a Question.

A row: `passage` (text or null), `question`, `options` (['(A)…', '(B)…', …]), `label` ('A', or a list such as
['A', 'D']), `answer` (the cloze reference, gaokao-mathcloze), `other`. The label's form decides the type:
a letter is a single-choice question, a list a multi-answer one graded on the exact set, and a row with no
label but an answer a cloze question. A one-letter list is multi-answer too: JEC-QA's questions may have
several right options and its labels are always lists, and AGIEval's scorer (src/evaluation.py) compares
letter sets for jec-qa-kd, jec-qa-ca and gaokao-physics, so ['C'] is right only for exactly {C}. (A run's
--multi-policy partial or f1 changes the points such a question earns, never its `correct`.)
"""

from __future__ import annotations

import json
import re
from typing import Any

from kaoshi.data.answers import parse_option_letters
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Gold, Question, QuestionType, Source
from kaoshi.data.options import normalize_letter, split_options

# The Chinese tasks (the exams' origin: GAOKAO English is a Chinese exam) -> source, published size.
AGIEVAL_TASKS: dict[str, tuple[str, int]] = {
    "gaokao-chinese": ("Gaokao", 246),
    "gaokao-english": ("Gaokao", 306),
    "gaokao-geography": ("Gaokao", 199),
    "gaokao-history": ("Gaokao", 235),
    "gaokao-biology": ("Gaokao", 210),
    "gaokao-chemistry": ("Gaokao", 207),
    "gaokao-physics": ("Gaokao", 200),
    "gaokao-mathqa": ("Gaokao", 351),
    "gaokao-mathcloze": ("Gaokao", 118),
    "logiqa-zh": ("LogiQA", 651),
    "jec-qa-kd": ("JEC-QA", 1000),
    "jec-qa-ca": ("JEC-QA", 1000),
}
# AGIEval's English tasks: a folder's copies are skipped with a note.
ENGLISH_TASKS = frozenset(
    (
        "lsat-ar",
        "lsat-lr",
        "lsat-rc",
        "logiqa-en",
        "sat-math",
        "sat-en",
        "sat-en-without-passage",
        "aqua-rat",
        "math",
    )
)
AGIEVAL_SPLIT = "test"
OPTION_LETTERS = "ABCDEFG"  # AGIEval's prompts name the last option from these
# '(A)text', as every option string is written; full-width brackets and letters are read as well.
_OPTION_PREFIX = re.compile(r"^[ \t\u3000]*[(（][ \t]*([A-Za-zＡ-Ｚａ-ｚ])[ \t]*[)）][ \t\u3000]*")


def agieval_question(record: Any, task: str, question_id: str, split: str, source: Source | None) -> Question:
    """One AGIEval row (or few-shot demo) as a Question; FieldError on a row that does not fit."""
    if not isinstance(record, dict):
        raise FieldError(None, f"expected a JSON object, got {type(record).__name__}")
    passage = _optional_text(record, "passage")
    question = _optional_text(record, "question")
    if "question" not in record or record["question"] is None:
        raise FieldError("question", "missing required field")
    stem = f"{passage.strip()}\n{question.strip()}" if passage.strip() else question.strip()
    if not stem:
        raise FieldError("question", "is empty (and the row has no passage)")
    label, reference = record.get("label"), record.get("answer")
    verbatim = [("passage", passage), ("question", question)]
    options: tuple[tuple[str, str], ...] = ()
    if label not in (None, "", []):
        raw_options = _option_strings(record.get("options"))
        options = _parse_options(raw_options)
        qtype, gold = _parse_label(label, options)
        verbatim += [("options", json.dumps(raw_options, ensure_ascii=False)), ("label", str(label))]
    elif reference not in (None, ""):
        if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
            raise FieldError("answer", f"expected the cloze answer as text, got {reference!r}")
        # Imported here: the question kinds import this package's model.
        from kaoshi.qtypes import kind_of

        qtype, gold = QuestionType.CLOZE, kind_of(QuestionType.CLOZE).parse_gold(str(reference))
        verbatim.append(("answer", str(reference)))
    else:
        raise FieldError("label", "missing: a choice row needs 'label', a cloze row 'answer'")
    source_name, _ = AGIEVAL_TASKS.get(task, (None, 0))
    return Question(
        id=question_id,
        type=qtype,
        stem=stem,
        options=options,
        answer=gold,
        explanation=_solution(record.get("other")),
        subject=task,
        category=source_name,
        split=split,
        source=source,
        verbatim=tuple(verbatim),
    )


def _optional_text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(name, f"expected text or null, got {type(value).__name__}")
    return value


def _option_strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise FieldError("options", f"expected a list of option strings such as '(A)…', got {value!r}")
    if not all(isinstance(option, str) for option in value):
        raise FieldError("options", "every option must be text")
    return list(value)


def _parse_options(raw: list[str]) -> tuple[tuple[str, str], ...]:
    """'(A)text' strings -> (letter, text). A single string holding every option ('A. 甲\tB. 乙 …', a
    quirk AGIEval's prompt code allows for) is split as QualBench's embedded options are."""
    if len(raw) == 1:
        _, embedded = split_options(raw[0].replace("\t", "\n"))
        if len(embedded) < 2:
            raise FieldError("options", f"one option string {raw[0]!r} holds no lettered options")
        parsed = embedded
    else:
        parsed = tuple(_parse_option(position, text) for position, text in enumerate(raw))
    if len(parsed) > len(OPTION_LETTERS):
        raise FieldError("options", f"at most {len(OPTION_LETTERS)} options (A-G), got {len(parsed)}")
    if not all(text.strip() for _, text in parsed):
        empty = next(letter for letter, text in parsed if not text.strip())
        raise FieldError("options", f"option {empty} is empty")
    return tuple((letter, text.strip()) for letter, text in parsed)


def _parse_option(position: int, text: str) -> tuple[str, str]:
    expected = OPTION_LETTERS[position] if position < len(OPTION_LETTERS) else "?"
    match = _OPTION_PREFIX.match(text)
    if match is None or normalize_letter(match.group(1)) != expected:
        raise FieldError("options", f"option {position + 1} {text[:40]!r} does not start with '({expected})'")
    return expected, text[match.end() :]


def _parse_label(label: Any, options: tuple[tuple[str, str], ...]) -> tuple[QuestionType, Gold]:
    letters = "".join(letter for letter, _ in options)
    if isinstance(label, str):
        qtype = QuestionType.SINGLE
        if len(label.strip()) != 1:
            raise FieldError("label", f"label {label!r}: a text label is one letter (several: a list)")
    elif isinstance(label, list) and all(isinstance(item, str) for item in label):
        qtype = QuestionType.MULTI
    else:
        raise FieldError("label", f"expected a letter or a list of letters, got {label!r}")
    try:
        gold = parse_option_letters(label)
    except FieldError as exc:
        raise FieldError("label", exc.reason) from None
    if not gold <= set(letters):
        raise FieldError("label", f"label {label!r} names a letter that is not an option ({letters})")
    return qtype, gold


def _solution(other: Any) -> str:
    """The worked solution some rows carry in `other` (others hold only their source)."""
    if isinstance(other, dict) and isinstance(other.get("solution"), str):
        return str(other["solution"]).strip()
    return ""
