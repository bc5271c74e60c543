"""Multiple choice (多选题): a set of option letters, graded under the run's multiple-choice policy."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from kaoshi.data.answers import parse_option_letters
from kaoshi.data.model import Gold, Question, QuestionType
from kaoshi.qtypes.kind import QuestionKind, Ranking, Wording
from kaoshi.qtypes.shared import answer_then_explanation, letter_set
from kaoshi.scoring.grade import Grade, GradingPolicy, grade_exact, multi_credit

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction

# 2**6 - 1 = 63 letter sets; beyond that ranking every set is not a sensible log-likelihood method.
MAX_MULTI_OPTIONS = 6


def letter_sets(question: Question) -> tuple[str, ...]:
    """Every non-empty letter set, letters in order ('A', 'AB', ...); none beyond MAX_MULTI_OPTIONS."""
    letters = question.letters
    if len(letters) > MAX_MULTI_OPTIONS:
        return ()
    return tuple(
        "".join(combo) for size in range(1, len(letters) + 1) for combo in combinations(letters, size)
    )


def read_multi(question: Question, text: str, prompt: str | None) -> Extraction:
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.extract import clean_output, extract_multi

    return extract_multi(question, clean_output(text, prompt))


def grade_multi(question: Question, answer: Gold, policy: GradingPolicy) -> Grade:
    """Exact equality decides `correct`; the policy decides the points a set of letters earns."""
    exact = grade_exact(question, answer, policy)
    gold = question.answer
    if policy.multi == "exact" or not isinstance(answer, frozenset) or not isinstance(gold, frozenset):
        return exact
    credit = multi_credit(answer, gold, policy.multi, policy.partial_credit)
    return Grade(exact.correct, question.points * credit)


MULTI_CHOICE = QuestionKind(
    name=QuestionType.MULTI.value,
    wording=Wording(
        name_zh="多选题",
        plain="以下是多项选择题，请选出所有正确的选项。",
        exam_style=(
            "请回答下面的多项选择题，从选项中选出所有正确答案。"
            "先写“答案：”和全部正确选项的字母，再在“解析：”后说明理由。"
        ),
        extractor="只输出它最终选择的全部选项字母",
    ),
    objective=True,
    has_options=True,
    ranking=Ranking(letter_sets, letter_set, with_answer_end=True),
    extract=read_multi,
    grade=grade_multi,
    parse_gold=parse_option_letters,
    target=answer_then_explanation,
)
