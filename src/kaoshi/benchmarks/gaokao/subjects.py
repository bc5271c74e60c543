"""GAOKAO-Bench's subjects: Chinese names, full marks, the weights of their objective and subjective parts,
and the two exam totals, as the repository's `Bench/merge_OBJ_SUB_score.py` combines them."""

from __future__ import annotations

import re
from typing import NamedTuple


class GaokaoSubject(NamedTuple):
    chinese: str
    full_marks: float  # the subject's full marks in the real exam
    objective_weight: float  # the share of the full marks its objective items' scoring rate decides
    subjective_weight: float


# Math I is the science paper (理科数学), Math II the liberal-arts paper (文科数学).
GAOKAO_SUBJECTS: dict[str, GaokaoSubject] = {
    "Chinese": GaokaoSubject("语文", 150, 0.3, 0.7),
    "Math I": GaokaoSubject("数学（理科）", 150, 0.4, 0.6),
    "Math II": GaokaoSubject("数学（文科）", 150, 0.4, 0.6),
    "English": GaokaoSubject("英语", 150, 0.7, 0.3),
    "Physics": GaokaoSubject("物理", 110, 0.4, 0.6),
    "Chemistry": GaokaoSubject("化学", 100, 0.5, 0.5),
    "Biology": GaokaoSubject("生物", 90, 0.3, 0.7),
    "Politics": GaokaoSubject("政治", 100, 0.5, 0.5),
    "History": GaokaoSubject("历史", 100, 0.5, 0.5),
    "Geography": GaokaoSubject("地理", 100, 0.4, 0.6),
}
SCIENCE_TOTAL = "science total"  # 理科总分
LIBERAL_ARTS_TOTAL = "liberal-arts total"  # 文科总分
EXAM_TOTALS: dict[str, tuple[str, ...]] = {
    SCIENCE_TOTAL: ("Chinese", "Math I", "English", "Physics", "Chemistry", "Biology"),
    LIBERAL_ARTS_TOTAL: ("Chinese", "Math II", "English", "Politics", "History", "Geography"),
}
# File-name words -> subject; Math_II before Math_I, so that "Math_II" is not read as "Math_I".
_SUBJECT_WORDS = (
    (re.compile(r"Math_II(?![A-Za-z])"), "Math II"),
    (re.compile(r"Math_I(?![A-Za-z])"), "Math I"),
    (re.compile(r"Chinese"), "Chinese"),
    (re.compile(r"English"), "English"),
    (re.compile(r"Physics"), "Physics"),
    (re.compile(r"Chemistry"), "Chemistry"),
    (re.compile(r"Biology"), "Biology"),
    (re.compile(r"Political|Politics"), "Politics"),
    (re.compile(r"History"), "History"),
    (re.compile(r"Geography"), "Geography"),
)


def subject_of(keyword: str) -> str | None:
    """The subject a file keyword such as `2010-2022_Math_II_MCQs` names."""
    for pattern, subject in _SUBJECT_WORDS:
        if pattern.search(keyword):
            return subject
    return None
