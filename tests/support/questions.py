"""Questions built in code, shared by the tests of answer extraction, scoring and the store."""

from __future__ import annotations

from kaoshi.data.model import Question, QuestionType
from tests.support.extraction_cases import MULTI_OPTIONS, SINGLE_OPTIONS

# The extraction table's questions (tests/support/extraction_cases.py holds their options and the replies).
SINGLE_Q = Question(
    "s", QuestionType.SINGLE, "扑救带电设备初起火灾应选用（）。", SINGLE_OPTIONS, frozenset("C")
)
MULTI_Q = Question("m", QuestionType.MULTI, "燃烧的必要条件有（）。", MULTI_OPTIONS, frozenset("ABC"))
JUDGE_Q = Question("j", QuestionType.TRUE_FALSE, "发生火灾时可以乘坐普通电梯逃生。", (), False)
OPEN_Q = Question("o", QuestionType.OPEN, "简述四不放过。", (), "参考答案")

# A multiple-choice question for the scoring policies: gold ABD of five options, worth 2 points.
SCORED_OPTIONS = tuple((letter, letter.lower()) for letter in "ABCDE")
SCORED_MULTI = Question("m", QuestionType.MULTI, "q", SCORED_OPTIONS, frozenset("ABD"), points=2.0)
