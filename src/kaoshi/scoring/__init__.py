"""Scoring: answer extraction and grading."""

from kaoshi.scoring.extract import Extraction, Status, clean_output, extract_answer, strip_reasoning
from kaoshi.scoring.grade import (
    MULTI_POLICIES,
    Grade,
    GradingPolicy,
    MultiPolicy,
    grade_answer,
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
    "extract_answer",
    "grade_answer",
    "grade_exact",
    "multi_credit",
    "strip_reasoning",
]
