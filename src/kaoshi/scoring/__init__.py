"""Scoring: the rules that read answers from replies and grade them, pure functions of text and values;
kaoshi.qtypes picks the rules for each question type (extract_answer, grade_answer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

# Names are imported on first use: the store's records need only kaoshi.scoring.grade, and importing
# kaoshi.scoring.extract compiles its answer patterns (about 10 ms of every command's start).
_EXPORTS = {
    **dict.fromkeys(("Extraction", "Status", "clean_output", "strip_reasoning"), "kaoshi.scoring.extract"),
    **dict.fromkeys(
        ("MULTI_POLICIES", "Grade", "GradingPolicy", "MultiPolicy", "grade_exact", "multi_credit"),
        "kaoshi.scoring.grade",
    ),
}

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction, Status, clean_output, strip_reasoning
    from kaoshi.scoring.grade import (
        MULTI_POLICIES,
        Grade,
        GradingPolicy,
        MultiPolicy,
        grade_exact,
        multi_credit,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


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
