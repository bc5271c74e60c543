"""Single choice (单选题): one option letter."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from kaoshi.data.answers import parse_option_letters
from kaoshi.data.model import Question, QuestionType
from kaoshi.qtypes.kind import QuestionKind, Ranking, Wording
from kaoshi.qtypes.shared import answer_then_explanation, letter_set, option_letters
from kaoshi.scoring.grade import grade_exact

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction


def read_single(question: Question, text: str, prompt: str | None) -> Extraction:
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.extract import clean_output, extract_single

    return extract_single(question, clean_output(text, prompt))


SINGLE_CHOICE = QuestionKind(
    name=QuestionType.SINGLE.value,
    wording=Wording(
        name_zh="单选题",
        plain="以下是单项选择题，请选出唯一正确的选项。",
        exam_style=(
            "请回答下面的单项选择题，从选项中选出一个正确答案。"
            "先写“答案：”和选项字母，再在“解析：”后说明理由。"
        ),
        extractor="只输出它最终选择的一个选项字母",
    ),
    objective=True,
    has_options=True,
    # One letter is no prefix of another: scored bare.
    ranking=Ranking(option_letters, letter_set),
    extract=read_single,
    grade=grade_exact,
    parse_gold=partial(parse_option_letters, exactly_one=True),
    target=answer_then_explanation,
)
