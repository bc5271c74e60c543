"""Exams and questions: the data model and generic reading of files (each benchmark's loader is in its
package, kaoshi.benchmarks.<name>; kaoshi.benchmarks.load_exam_result picks one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

# Names are imported on first use: the store's records need the data model alone, not the loaders'
# collecting (kaoshi.data.collect), which a command reading runs never uses.
_EXPORTS = {
    **dict.fromkeys(("Dropped", "LoadResult"), "kaoshi.data.collect"),
    **dict.fromkeys(("DataError", "RowError"), "kaoshi.data.errors"),
    **dict.fromkeys(
        ("Exam", "Gold", "Question", "QuestionType", "Source", "format_gold"), "kaoshi.data.model"
    ),
}

if TYPE_CHECKING:
    from kaoshi.data.collect import Dropped, LoadResult
    from kaoshi.data.errors import DataError, RowError
    from kaoshi.data.model import Exam, Gold, Question, QuestionType, Source, format_gold


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "DataError",
    "Dropped",
    "Exam",
    "Gold",
    "LoadResult",
    "Question",
    "QuestionType",
    "RowError",
    "Source",
    "format_gold",
]
