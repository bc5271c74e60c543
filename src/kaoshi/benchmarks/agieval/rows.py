"""AGIEval's Chinese tasks and their rows: the task table, and one row (or few-shot demo) as a Question.

A row: `passage` (text or null), `question`, `options` (['(A)…', '(B)…', …]), `label` ('A', or a list such as
['A', 'D']), `answer` (the cloze reference, gaokao-mathcloze), `other`. The label's form decides the type:
a letter is a single-choice question, a list a multi-answer one graded on the exact set, and a row with no
label but an answer a cloze question. A one-letter list is multi-answer too: JEC-QA's questions may have
several right options and its labels are always lists, and AGIEval's scorer (src/evaluation.py) compares
letter sets for jec-qa-kd, jec-qa-ca and gaokao-physics, so ['C'] is right only for exactly {C}. (A run's
--multi-policy partial or f1 changes the points such a question earns, never its `correct`.)

The option strings are read by kaoshi.benchmarks.agieval.options. The published labels have three quirks, each
read as said below and reported once per kind (kaoshi.data.quirks), never refused: multi-answer labels
written as text ('AD', 'A B D': gaokao-mathqa's 2021/2022 new-curriculum questions), a mark among a list's
letters (['A', 'C', 'D', '。']: jec-qa-ca) and an empty list (jec-qa-kd). AGIEval's scorer credits none of
those rows whatever the reply: it compares one letter with 'AD', a letter set with {'A', 'C', 'D', '。'}, and
a letter set with None.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from kaoshi.benchmarks.agieval.options import read_options
from kaoshi.data.answers import parse_option_letters
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Gold, Question, QuestionType, Source
from kaoshi.data.quirks import QuirkLog
from kaoshi.qtypes import kind_of

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
# Quirks of the published labels: each is read (as said) and reported once per kind, never refused.
TEXT_LABEL = (
    "write a multi-answer label as text ('AD', 'A B D'): read as a multi-answer question on the exact set "
    "(AGIEval's scorer compares one letter with the text, so never credits it)"
)
STRAY_MARK = "have a mark among the label's letters (['A', 'C', 'D', '。']): left out"
NO_LABEL = (
    "have an empty label list and no answer: loaded without a gold answer, so answered but not graded "
    "(AGIEval's scorer counts it wrong)"
)
# Several letters written as text: 'AD', 'A B D', 'A、C'.
_LETTERS_TEXT = re.compile(r"\s*[A-GＡ-Ｇ](?:[\s,，、]*[A-GＡ-Ｇ])+\s*")


def agieval_question(
    record: Any,
    task: str,
    question_id: str,
    split: str,
    source: Source | None,
    quirks: QuirkLog | None = None,
) -> Question:
    """One AGIEval row (or few-shot demo) as a Question; FieldError on a row that does not fit. The
    published layout's quirks the row has (options.py) are noted in `quirks` at `source`
    once the row is read."""
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
    found: tuple[str, ...] = ()
    gold: Gold
    # An empty label list on a row without a cloze answer: a choice row whose letters are missing.
    if label not in (None, "", []) or (label == [] and reference in (None, "")):
        raw_options = _option_strings(record.get("options"))
        options, found = read_options(raw_options)
        qtype, gold, label_quirks = _parse_label(label, options)
        found += label_quirks
        verbatim += [("options", json.dumps(raw_options, ensure_ascii=False)), ("label", str(label))]
    elif reference not in (None, ""):
        if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
            raise FieldError("answer", f"expected the cloze answer as text, got {reference!r}")

        qtype, gold = QuestionType.CLOZE, kind_of(QuestionType.CLOZE).parse_gold(str(reference))
        verbatim.append(("answer", str(reference)))
    else:
        raise FieldError("label", "missing: a choice row needs 'label', a cloze row 'answer'")
    source_name, _ = AGIEVAL_TASKS.get(task, (None, 0))
    if quirks is not None and source is not None:
        for description in found:
            quirks.note(description, source.file, source.line)
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


def _parse_label(
    label: Any, options: tuple[tuple[str, str], ...]
) -> tuple[QuestionType, frozenset[str] | None, tuple[str, ...]]:
    """The type and gold letters a label gives (None: an empty list, no gold), and the quirks found."""
    if label == []:
        return QuestionType.MULTI, None, (NO_LABEL,)
    quirks: list[str] = []
    if isinstance(label, str):
        qtype = QuestionType.SINGLE
        if len(label.strip()) != 1:
            if not _LETTERS_TEXT.fullmatch(label):
                raise FieldError("label", f"label {label!r}: a text label is one letter (several: a list)")
            qtype = QuestionType.MULTI
            quirks.append(TEXT_LABEL)
        letters_given: Any = label
    elif isinstance(label, list) and all(isinstance(item, str) for item in label):
        qtype = QuestionType.MULTI
        letters_given = [item for item in label if not _is_punctuation(item)]
        if len(letters_given) != len(label):
            quirks.append(STRAY_MARK)
    else:
        raise FieldError("label", f"expected a letter or a list of letters, got {label!r}")
    try:
        gold = parse_option_letters(letters_given)
    except FieldError as exc:
        raise FieldError("label", exc.reason) from None
    letters = "".join(letter for letter, _ in options)
    if not gold <= set(letters):
        raise FieldError("label", f"label {label!r} names a letter that is not an option ({letters})")
    empty = sorted(letter for letter, text in options if letter in gold and not text)
    if empty:
        raise FieldError("label", f"label {label!r} names option {empty[0]}, which has no text")
    return qtype, gold, tuple(quirks)


def _is_punctuation(item: str) -> bool:
    return bool(item.strip()) and all(unicodedata.category(ch).startswith("P") for ch in item.strip())


def _solution(other: Any) -> str:
    """The worked solution some rows carry in `other` (others hold only their source)."""
    if isinstance(other, dict) and isinstance(other.get("solution"), str):
        return str(other["solution"]).strip()
    return ""
