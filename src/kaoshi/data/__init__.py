"""Exams and questions: the data model and the loaders for real benchmark formats."""

from kaoshi.data.collect import Dropped, LoadResult
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.loaders import BENCHMARKS, detect_benchmark, load_exam, sample_exam_path
from kaoshi.data.model import Exam, Gold, Question, QuestionType, Source, format_gold

__all__ = [
    "BENCHMARKS",
    "DataError",
    "Dropped",
    "Exam",
    "Gold",
    "LoadResult",
    "Question",
    "QuestionType",
    "RowError",
    "Source",
    "detect_benchmark",
    "format_gold",
    "load_exam",
    "sample_exam_path",
]
