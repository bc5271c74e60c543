"""Question types: one kind per type (single, multi, judge, open, cloze), each owning its prompt wording,
log-likelihood candidates, answer extraction, grading, gold-answer parsing and fine-tuning target.

Everything that differs per type looks the kind up (`kind_of(question.type)`) instead of branching on the
type: a new type's behaviour is one module with one `QuestionKind` and one `register_kind` call. Loading it
from files and reading it back from a store also need its member in the closed `QuestionType` enum
(data/model.py); a type registered only from user code works through `kaoshi.evaluate` in memory.
"""

from kaoshi.qtypes.dispatch import extract_answer, grade_answer, parse_letters
from kaoshi.qtypes.kind import Extractor, GoldParser, Grader, QuestionKind, Ranking, TargetWriter, Wording
from kaoshi.qtypes.registry import QUESTION_KINDS, kind_of, register_kind

__all__ = [
    "QUESTION_KINDS",
    "Extractor",
    "GoldParser",
    "Grader",
    "QuestionKind",
    "Ranking",
    "TargetWriter",
    "Wording",
    "extract_answer",
    "grade_answer",
    "kind_of",
    "parse_letters",
    "register_kind",
]
