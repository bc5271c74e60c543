"""Scoring: the rules that read answers from replies and grade them, pure functions of text and values;
kaoshi.qtypes picks the rules for each question type (extract_answer, grade_answer)."""

from kaoshi.scoring.extract import Extraction, Status, clean_output, strip_reasoning
from kaoshi.scoring.grade import (
    MULTI_POLICIES,
    Grade,
    GradingPolicy,
    MultiPolicy,
    grade_exact,
    multi_credit,
)

__all__ = [
    "MULTI_POLICIES",
    "Extraction",
    "Grade",
    "GradingPolicy",
    "MultiPolicy",
    "Status",
    "clean_output",
    "grade_exact",
    "multi_credit",
    "strip_reasoning",
]
