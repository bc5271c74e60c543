"""Question type name -> its kind. The built-in types are here; `register` adds another."""

from __future__ import annotations

from kaoshi.errors import InputError
from kaoshi.qtypes.cloze import CLOZE
from kaoshi.qtypes.judge import TRUE_FALSE
from kaoshi.qtypes.kind import QuestionKind
from kaoshi.qtypes.multi import MULTI_CHOICE
from kaoshi.qtypes.multi_question import MULTI_QUESTION
from kaoshi.qtypes.open import OPEN_ANSWER
from kaoshi.qtypes.single import SINGLE_CHOICE

QUESTION_KINDS: dict[str, QuestionKind] = {
    kind.name: kind for kind in (SINGLE_CHOICE, MULTI_CHOICE, TRUE_FALSE, OPEN_ANSWER, CLOZE, MULTI_QUESTION)
}


def register(kind: QuestionKind) -> QuestionKind:
    """Make a question type known by its name; a name that is taken is refused (ValueError)."""
    if kind.name in QUESTION_KINDS:
        raise InputError(f"question type {kind.name!r} is already registered")
    QUESTION_KINDS[kind.name] = kind
    return kind


def kind_of(qtype: str) -> QuestionKind:
    """The kind of a question type: a QuestionType, or its name as a sample stores it ("single")."""
    kind = QUESTION_KINDS.get(qtype)  # a QuestionType is a str equal to its name
    if kind is None:
        name = getattr(qtype, "value", qtype)
        raise InputError(f"unknown question type {name!r} (registered: {', '.join(QUESTION_KINDS)})")
    return kind
