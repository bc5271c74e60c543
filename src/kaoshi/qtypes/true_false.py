"""True/false (判断题): 正确 or 错误, stored as a truth value."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.data.answers import parse_judge_answer
from kaoshi.data.model import Question, QuestionType
from kaoshi.qtypes.kind import QuestionKind, Ranking, Wording
from kaoshi.qtypes.shared import answer_then_explanation
from kaoshi.scoring.grade import grade_exact

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction

JUDGE_CANDIDATES = ("正确", "错误")


def verdicts(question: Question) -> tuple[str, ...]:
    return JUDGE_CANDIDATES


def verdict_of(question: Question, candidate: str) -> bool:
    return candidate == JUDGE_CANDIDATES[0]


def read_judge(question: Question, text: str, prompt: str | None) -> Extraction:
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.extract import clean_output, extract_judge

    return extract_judge(clean_output(text, prompt))


TRUE_FALSE = QuestionKind(
    name=QuestionType.TRUE_FALSE.value,
    wording=Wording(
        name_zh="判断题",
        plain="以下是判断题，请判断下列说法是否正确，回答“正确”或“错误”。",
        exam_style="请判断下面的说法是否正确。先写“答案：正确”或“答案：错误”，再在“解析：”后说明理由。",
        extractor="只输出“正确”或“错误”",
    ),
    objective=True,
    has_options=False,
    # 正确 and 错误 are no prefix of one another: scored bare.
    ranking=Ranking(verdicts, verdict_of),
    extract=read_judge,
    grade=grade_exact,
    parse_gold=parse_judge_answer,
    target=answer_then_explanation,
)
