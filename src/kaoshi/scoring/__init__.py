"""Scoring: answer extraction and grading."""

from kaoshi.scoring.extract import Extraction, Status, extract_answer, strip_reasoning
from kaoshi.scoring.grade import Grade, grade_answer

__all__ = ["Extraction", "Grade", "Status", "extract_answer", "grade_answer", "strip_reasoning"]
