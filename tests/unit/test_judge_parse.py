"""Judge-score parsing, table-driven over realistic judge replies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kaoshi.prompts.judge import judge_prompt, points_judge_prompt
from kaoshi.runner.judge import POINTS_READ_LIMIT
from kaoshi.scoring.judge_parse import parse_judge_score
from tests.support.judge_cases import (
    CAREFUL_PROMPT,
    DEBATE_CASES,
    DEBATE_PROMPT,
    JUDGE_CASES,
    PROMPT_CASES,
)


def test_the_table_is_large_enough() -> None:
    assert len(JUDGE_CASES) >= 90 and len(PROMPT_CASES) + len(DEBATE_CASES) >= 12


@pytest.mark.parametrize(("reply", "expected"), JUDGE_CASES)
def test_judge_score(reply: str, expected: float | None) -> None:
    parsed = parse_judge_score(reply)
    assert parsed.score == expected, reply
    assert parsed.status == ("unparsed" if expected is None else "ok")


@pytest.mark.parametrize(("reply", "expected"), JUDGE_CASES)
def test_knowing_the_prompt_changes_no_reply_of_the_table(reply: str, expected: float | None) -> None:
    assert parse_judge_score(reply, CAREFUL_PROMPT).score == expected, reply
    assert parse_judge_score(reply, DEBATE_PROMPT).score == expected, reply


@pytest.mark.parametrize(("reply", "expected"), PROMPT_CASES)
def test_numbers_copied_from_the_prompt_are_not_scores(reply: str, expected: float | None) -> None:
    parsed = parse_judge_score(reply, CAREFUL_PROMPT)
    assert parsed.score == expected, reply
    assert parsed.status == ("unparsed" if expected is None else "ok")


@pytest.mark.parametrize(("reply", "expected"), DEBATE_CASES)
def test_the_second_judge_of_a_debate(reply: str, expected: float | None) -> None:
    assert parse_judge_score(reply, DEBATE_PROMPT).score == expected, reply


@pytest.mark.parametrize("mode", ["careful", "general"])
def test_a_judge_repeating_its_prompt_never_scores(mode: str) -> None:
    """The SmolLM2 failure: echoes of the scale, rubric and output template read as 10/10."""
    prompt = judge_prompt(mode, "简述光合作用的意义。", "提供有机物和氧气。", "植物会长大。")
    assert parse_judge_score(prompt, prompt).status == "unparsed"
    for line in prompt.splitlines():
        assert parse_judge_score(line, prompt).status == "unparsed", line


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CAREFUL_PROMPT.splitlines()), max_size=12))
def test_any_sequence_of_prompt_lines_is_unparsed(lines: list[str]) -> None:
    assert parse_judge_score("\n".join(lines), CAREFUL_PROMPT).status == "unparsed"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(CAREFUL_PROMPT.splitlines()), max_size=8), st.integers(0, 10))
def test_a_labelled_score_survives_any_echo_of_the_prompt(lines: list[str], score: int) -> None:
    """`答案2得分：N` wherever it stands among copied prompt lines (the judge's own line differs from the
    template's `答案2得分：X` at the number)."""
    for position in (0, len(lines) // 2, len(lines)):
        reply = "\n".join([*lines[:position], f"答案2得分：{score}", *lines[position:]])
        assert parse_judge_score(reply, CAREFUL_PROMPT).score == score, reply


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.one_of(st.none(), st.text(max_size=300)))
def test_arbitrary_replies_never_crash(reply: str, prompt: str | None) -> None:
    parsed = parse_judge_score(reply, prompt)
    assert (parsed.score is None) == (parsed.status == "unparsed")
    assert parsed.score is None or 0 <= parsed.score <= 10


# Issue 30: a 135M judge that paraphrased its own grading prompt was scored 10/10. The prompts as
# kaoshi.runner.judge builds them, and two of other shapes (a scale with levels and a format line; an
# example reply).
QUESTION, REFERENCE, CANDIDATE = "简述光合作用的意义。", "提供有机物和氧气，维持碳氧平衡。", "植物会长大。"
CAREFUL = judge_prompt("careful", QUESTION, REFERENCE, CANDIDATE)
GENERAL = judge_prompt("general", QUESTION, REFERENCE, CANDIDATE)
GAOKAO = points_judge_prompt(
    "已知等差数列中a_1=1，d=2，求通项公式。", "由通项公式得。", "a_n=2n-1", 12, "a_n=2n"
)
LEVELS = (
    "请根据参考答案给考生答案打分，请给出0到10分的评分。\n10分：完全正确；5分：部分正确；0分：错误\n"
    "参考答案：2\n考生答案：2\n格式：评分：X/10"
)
EXAMPLE = (
    'Grade the response against the reference on a scale of 0 to 10. Reply strictly in this format: "Score: '
    '[[0-10]]", for example: "Score: [[5]]".\nReference: Paris\nResponse: Paris'
)
PROMPTS = {"careful": CAREFUL, "general": GENERAL, "gaokao": GAOKAO, "levels": LEVELS, "example": EXAMPLE}

# What a small judge writes instead of grading: its prompt's scale, rubric, intro and output template,
# copied in part, re-punctuated, paraphrased or translated. Each is unparsed, never full marks.
ECHOES: list[tuple[str, str]] = [
    # SmolLM2-135M-Instruct's greedy reply to a careful prompt, verbatim: its rubric, the numbers mixed up
    (
        "careful",
        "(a) 答案2与答案1部分一致：0-5分；\n(b) 答案2与答案1部分一致：0-3分；\n"
        "(c) 答案2缺少重要要点：0-3分；\n(d) 答案2大段照抄题目：10\n(e) 答案2有明显的知识性错误：0",
    ),
    ("careful", "(d) 答案2大段照抄题目，得10分"),  # a rubric line restated, its number changed
    ("careful", "答案2与答案1意思一致、要点完整：10分\n答案2与答案1部分一致：0-5分"),
    ("careful", "评分标准：答案2与答案1意思一致、要点完整得10分。"),
    ("careful", "评分标准：\n(a) 意思一致、要点完整：10分\n(b) 部分一致：0-5分\n(d) 与题目无关：0分"),
    ("careful", "评分标准：10分表示完全正确，0分表示错误。"),
    ("careful", "如果答案2与答案1意思一致，要点完整，得10分。"),
    ("careful", "意思一致、要点完整，得10分；部分一致，得0-5分。"),
    ("careful", "完全正确得10分，部分正确得5分，错误得0分。"),
    ("careful", "答案1是标准答案，得10分。"),
    ("careful", "答案1为标准答案，视为完全正确，得10分；答案2为考生答案。"),
    ("careful", "视为完全正确，得10分"),
    ("careful", "你是一名严谨的阅卷老师。请对照答案1评判答案2，满分10分。\n答案1得分：10\n答案2得分：X"),
    ("careful", "请对照答案1评判答案2，满分为10分。\n答案1得分：10"),
    ("careful", "满分10分，答案2得分：X"),
    ("careful", "答案1得分：10\n答案2得分：10（X为0到10之间的数）"),  # the template with its placeholder
    ("careful", "评分理由：\n(a) 答案1得分：10\n(b) 答案2得分：X（X为0到10之间的数）"),
    ("careful", "Answer 1 is the reference answer, considered fully correct, with a score of 10."),
    ("careful", "You are a strict grader. Answer 1 (the reference, fully correct, gets 10 points)."),
    ("careful", "The full score is 10 points. Answer 1 score: 10. Answer 2 score: X"),
    ("careful", "Scoring criteria: 10 points if Answer 2 agrees with Answer 1; 0-5 points if partly."),
    ("careful", "If Answer 2 matches Answer 1, it gets 10 points."),
    ("general", "答案1（标准答案）视为完全正确，得10分。满分10分。"),
    ("general", "A score of 10 means the answer is fully correct."),
    # the points form: the item's points are its scale
    ("gaokao", "本题分值12分，分步给分，得分不超过本题分值。"),
    ("gaokao", "【分值】12分"),
    ("gaokao", "分值：12分\n【总分】N分"),
    ("gaokao", "按照本题分值12分评分。"),
    ("gaokao", "得分不超过本题分值12分。"),
    ("gaokao", "【总分】12分（N为0到本题分值之间的数）"),
    # the shape of SmolLM2-135M-Instruct's reply to the gaokao prompt: its opening, then the item's points
    ("gaokao", "你是一名高考阅卷老师。请先简要说明各步骤的得分理由。\n\n**1. 说明：**\n\n* 12分"),
    ("levels", "10分：完全正确；5分：部分正确；0分：错误"),
    ("levels", "完全正确：10分\n部分正确：5分\n错误：0分"),
    ("levels", "完全正确得10分"),  # the level restated the other way round
    ("levels", "评分：X/10"),
    ("levels", "请给出0到10分的评分。满分10分"),
    ("example", "Score: [[0-10]]"),
    ("example", "Score: [[5]]"),  # the prompt's example
    ("example", "I will grade the response on a scale of 0 to 10. The score is out of 10."),
]

# Verdicts that mention the scale, the rubric or Answer 1's full marks: read the same with the prompt and
# without it.
VERDICTS: list[tuple[str, str, float]] = [
    ("levels", "按照0-10分的标准，我给7分", 7),
    ("levels", "评分：10/10，完全正确", 10),  # the format line `评分：X/10` filled
    ("levels", "10分：完全正确；5分：部分正确；0分：错误。考生答案与参考答案一致。\n评分：10/10", 10),
    (
        "careful",
        "<think>评分标准：(a) 意思一致：10分；(b) 部分一致：0-5分。答案2只答对一半。</think>\n评分：3",
        3,
    ),
    (
        "careful",
        "评分标准：(a) 意思一致、要点完整：10分；(b) 部分一致：0-5分。\n答案2只答对一半。\n评分：3",
        3,
    ),
    ("careful", "评分标准(b)：部分一致，0-5分。答案2得分：4", 4),
    ("careful", "答案2与答案1意思一致，要点完整。\n答案1得分：10\n答案2得分：10", 10),
    ("careful", "答案2得分：10分（满分10分）", 10),
    ("careful", "满分10分，答案2与答案1意思一致、要点完整，我给10分。", 10),
    ("careful", "答案2与答案1意思一致，得10分。", 10),
    ("careful", "答案2完全正确，得10分。", 10),
    ("careful", "答案1是标准答案，答案2与之一致，得10分。", 10),
    ("careful", "答案2提到了有机物和氧气，意思一致，要点基本完整，给9分。", 9),
    ("careful", "答案2部分一致，按(b)给4分", 4),
    ("careful", "答案2与题目无关，得0分。", 0),
    ("careful", "如果要求更严格可以扣分，但我给8分。", 8),
    ("careful", "完全正确。得分：10", 10),
    ("careful", "Answer 1 is the reference. Answer 2 matches it fully. Score: 10", 10),
    ("careful", "The reference answer gets 10; the response misses one point, so I give it 8/10.", 8),
    ("careful", "If it were complete it would get 10; as it is, I give it a 6.", 6),
    ("careful", "Even if minor details are missing, the response deserves 8/10.", 8),
    ("careful", "Score: 7/10 (0-10 scale, 10 = fully correct)", 7),
    ("gaokao", "本题共12分，学生得8分。", 8),
    ("gaokao", "本题分值12分，学生两问全对。\n【总分】12分", 12),
    ("gaokao", "第一问6分全对，第二问缺少步骤扣2分。\n【总分】10分", 10),
    ("gaokao", "第一问正确 6 分，第二问正确。\n【总分】12分", 12),
    ("example", "The response is correct. Score: [[10]]", 10),
    ("example", "On a scale of 0 to 10, I give it a 7.", 7),
]


def _limit(prompt: str) -> float:
    return POINTS_READ_LIMIT if prompt == "gaokao" else 10.0


@pytest.mark.parametrize(("prompt", "reply"), ECHOES)
def test_a_judge_restating_its_prompt_is_unparsed(prompt: str, reply: str) -> None:
    parsed = parse_judge_score(reply, PROMPTS[prompt], _limit(prompt))
    assert (parsed.score, parsed.status) == (None, "unparsed"), reply


@pytest.mark.parametrize(("prompt", "reply", "expected"), VERDICTS)
def test_a_verdict_that_mentions_the_scale_or_the_rubric(prompt: str, reply: str, expected: float) -> None:
    assert parse_judge_score(reply, PROMPTS[prompt], _limit(prompt)).score == expected, reply
    assert parse_judge_score(reply, None, _limit(prompt)).score == expected, reply


def test_a_judge_repeating_the_gaokao_prompt_never_scores() -> None:
    assert parse_judge_score(GAOKAO, GAOKAO, POINTS_READ_LIMIT).status == "unparsed"
    for line in GAOKAO.splitlines():
        assert parse_judge_score(line, GAOKAO, POINTS_READ_LIMIT).status == "unparsed", line


_PUNCTUATION = sorted("，、：；（）。")
_REPLACEMENTS = [",", "，", " ", "。", "(", ")", "\n", ""]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(CAREFUL_PROMPT.splitlines()), max_size=10),
    st.dictionaries(st.sampled_from(_PUNCTUATION), st.sampled_from(_REPLACEMENTS)),
)
def test_prompt_lines_re_punctuated_are_unparsed(lines: list[str], swaps: dict[str, str]) -> None:
    reply = "\n".join(lines).translate(str.maketrans(swaps))
    assert parse_judge_score(reply, CAREFUL_PROMPT).status == "unparsed", reply
