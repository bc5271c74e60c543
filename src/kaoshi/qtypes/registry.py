"""Question type name -> its kind. The built-in types are here; `register_kind` adds another."""

from __future__ import annotations

from kaoshi.data.model import QuestionType
from kaoshi.errors import InputError
from kaoshi.qtypes.cloze import CLOZE
from kaoshi.qtypes.kind import QuestionKind
from kaoshi.qtypes.multi import MULTI_CHOICE
from kaoshi.qtypes.multi_question import MULTI_QUESTION
from kaoshi.qtypes.open import OPEN_ANSWER
from kaoshi.qtypes.single import SINGLE_CHOICE
from kaoshi.qtypes.true_false import TRUE_FALSE

QUESTION_KINDS: dict[str, QuestionKind] = {
    kind.name: kind for kind in (SINGLE_CHOICE, MULTI_CHOICE, TRUE_FALSE, OPEN_ANSWER, CLOZE, MULTI_QUESTION)
}


def register_kind(kind: QuestionKind) -> QuestionKind:
    """Make a question type known by its name; a name that is taken is refused (ValueError)."""
    if kind.name in QUESTION_KINDS:
        raise InputError(f"question type {kind.name!r} is already registered")
    refuse_disagreement(kind)
    QUESTION_KINDS[kind.name] = kind
    return kind


def refuse_disagreement(kind: QuestionKind) -> None:
    """A kind must state its type's two facts as the data model has them (kaoshi.data.model.QuestionType)."""
    try:
        qtype = QuestionType(kind.name)
    except ValueError:  # a type only user code knows: it works in memory, where no file or store names it
        return
    if (qtype.is_choice, qtype.is_objective) != (kind.has_options, kind.objective):
        raise InputError(
            f"question type {kind.name!r}: has_options={kind.has_options}, objective={kind.objective}, "
            f"but the data model says {qtype.is_choice}, {qtype.is_objective}"
        )


def kind_of(qtype: str) -> QuestionKind:
    """The kind of a question type: a QuestionType, or its name as a sample stores it ("single")."""
    kind = QUESTION_KINDS.get(qtype)  # a QuestionType is a str equal to its name
    if kind is None:
        name = getattr(qtype, "value", qtype)
        raise InputError(f"unknown question type {name!r} (registered: {', '.join(QUESTION_KINDS)})")
    return kind
