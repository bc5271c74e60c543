"""Four-option single-choice rows (A-D): the shape C-Eval, FinEval, CMMLU and M3KE share. One parser for
the row, its answer and the cells as read, which the official prompts copy byte for byte."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kaoshi.data.collect import optional_text, require, require_text
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Question, QuestionType, Source
from kaoshi.data.quirks import QuirkLog
from kaoshi.qtypes import parse_letters

ABCD = ("A", "B", "C", "D")
# M3KE's published test split has three rows with an empty option cell. The official prompts print the
# cell as it is ('A. '), so the row is read with that option empty, not refused.
EMPTY_OPTION = "have an empty option (kept empty, as the official prompt prints it)"


@dataclass(frozen=True)
class AbcdColumns:
    """A benchmark's column names for the question, the answer and (where it has one) the explanation."""

    question: str = "question"
    answer: str = "answer"
    explanation: str | None = "explanation"
    # Whether an option cell may be empty: only where the published files have such rows (see EMPTY_OPTION).
    empty_options: bool = False


CEVAL_COLUMNS = AbcdColumns()


def parse_abcd_answer(raw: object, field: str = "answer") -> frozenset[str]:
    """One letter of A-D, as the single-choice type parses a gold answer; FieldError naming `field`."""
    try:
        answer = parse_letters(str(raw), QuestionType.SINGLE)
    except FieldError as exc:
        raise FieldError(field, exc.reason) from None
    if not answer <= set(ABCD):
        raise FieldError(field, f"answer {raw!r} is not one of A, B, C, D")
    return answer


def abcd_question(
    record: Mapping[str, object],
    *,
    row_id: str,
    subject: str,
    category: str | None,
    split: str,
    source: Source | None,
    columns: AbcdColumns = CEVAL_COLUMNS,
    group: str | None = None,
    test_withheld: bool = True,
) -> Question:
    """One row as a Question with id '{subject}/{row_id}'. Only the test split may leave the answer out,
    where the benchmark withholds its test labels (C-Eval, FinEval, M3KE; not CMMLU)."""
    row = dict(record)
    cells = [
        _option_cell(row, letter) if columns.empty_options else require_text(row, letter) for letter in ABCD
    ]
    raw_answer = row.get(columns.answer)
    answer: frozenset[str] | None = None
    if raw_answer is not None and str(raw_answer).strip():
        answer = parse_abcd_answer(raw_answer, columns.answer)
    elif split != "test" or not test_withheld:
        why = " (only the test split may omit it)" if test_withheld else ""
        raise FieldError(columns.answer, f"missing answer{why}")
    raw_question = require_text(row, columns.question)
    explanation = optional_text(row, columns.explanation) if columns.explanation else ""
    return Question(
        id=f"{subject}/{row_id}",
        type=QuestionType.SINGLE,
        stem=raw_question.strip(),
        options=tuple((letter, cell.strip()) for letter, cell in zip(ABCD, cells, strict=True)),
        answer=answer,
        explanation=explanation.strip(),
        subject=subject,
        category=category,
        split=split,
        group=group,
        source=source,
        # Keyed by kaoshi's names whatever the benchmark calls its columns, so one template reads them all.
        verbatim=(
            ("question", raw_question),
            *zip(ABCD, cells, strict=True),
            ("explanation", explanation),
            ("answer", "" if raw_answer is None else str(raw_answer)),
        ),
    )


def _option_cell(row: Mapping[str, object], letter: str) -> str:
    """An option's cell: present and text, possibly empty (see EMPTY_OPTION)."""
    value = require(dict(row), letter)
    if not isinstance(value, str):
        raise FieldError(letter, f"expected text, got {type(value).__name__}")
    return value


def abcd_quirks(questions: Iterable[Question]) -> tuple[str, ...]:
    """The load warnings for published-data quirks of four-option rows (an empty option), with where."""
    log = QuirkLog()
    for question in questions:
        if question.source is not None and any(not text for _, text in question.options):
            log.note(EMPTY_OPTION, question.source.file, question.source.line)
    return log.warnings()
