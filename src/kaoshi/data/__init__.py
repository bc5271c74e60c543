"""Exams and questions: the data model and generic reading of files (each benchmark's loader is in its
package, kaoshi.benchmarks.<name>; kaoshi.benchmarks.load_exam_result picks one)."""

from kaoshi.data.collect import Dropped, LoadResult
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.model import Exam, Gold, Question, QuestionType, Source, format_gold

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
