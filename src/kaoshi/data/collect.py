"""Collect parsed questions from rows, turning row failures into RowErrors and catching duplicate ids."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from kaoshi.data.errors import FieldError, RowError
from kaoshi.data.model import Exam, Question


@dataclass(frozen=True)
class Dropped:
    """A valid row that a cleaning rule removed, and why."""

    question_id: str
    reason: str


@dataclass(frozen=True)
class LoadResult:
    exam: Exam
    errors: tuple[RowError, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass
class QuestionCollector:
    file: str
    questions: list[Question] = field(default_factory=list)
    errors: list[RowError] = field(default_factory=list)
    _first_line: dict[str, int | None] = field(default_factory=dict)

    def add(self, line: int | None, parse: Callable[[], Question]) -> Question | None:
        try:
            question = parse()
        except FieldError as exc:
            self.errors.append(RowError(self.file, line, exc.field, exc.reason))
            return None
        if question.id in self._first_line:
            first = self._first_line[question.id]
            where = f" (first seen at line {first})" if first is not None else ""
            self.errors.append(RowError(self.file, line, "id", f"duplicate id {question.id!r}{where}"))
            return None
        self._first_line[question.id] = line
        self.questions.append(question)
        return question

    def error(self, error: RowError) -> None:
        self.errors.append(error)


def require(record: dict[str, object], *names: str) -> object:
    """The first present, non-null field among names (aliases); FieldError naming the first if none."""
    for name in names:
        if name in record and record[name] is not None:
            return record[name]
    raise FieldError(names[0], "missing required field")


def require_text(record: dict[str, object], *names: str) -> str:
    value = require(record, *names)
    if not isinstance(value, str):
        raise FieldError(names[0], f"expected text, got {type(value).__name__}")
    if not value.strip():
        raise FieldError(names[0], "is empty")
    return value


def optional_text(record: dict[str, object], *names: str) -> str:
    for name in names:
        value = record.get(name)
        if value is None:
            continue
        # A number is kept as written (some files store a domain as 1); true/false or NaN would become
        # the text "True" / "nan".
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise FieldError(name, f"expected text, got {type(value).__name__} {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise FieldError(name, f"expected text, got the number {value!r}")
        return str(value)
    return ""


def require_id(record: dict[str, object], *names: str) -> str:
    value = require(record, *names)
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FieldError(names[0], f"id must be a string or integer, got {value!r}")
    text = str(value).strip()
    if not text:
        raise FieldError(names[0], "is empty")
    return text
