"""Scoring: answer extraction and grading."""

from kaoshi.scoring.extract import Extraction, Status, extract_answer, strip_reasoning
from kaoshi.scoring.grade import MULTI_POLICIES, Grade, MultiPolicy, grade_answer, multi_credit

__all__ = [
    "MULTI_POLICIES",
    "Extraction",
    "Grade",
    "MultiPolicy",
    "Status",
    "extract_answer",
    "grade_answer",
    "multi_credit",
    "strip_reasoning",
]
