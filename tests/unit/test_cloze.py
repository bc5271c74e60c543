"""The built-in cloze type (填空题): gold answers, extraction from replies written the way real models write
them, blank-by-blank grading after the documented normalisation, wording, fine-tuning target, and a run."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import kaoshi
from kaoshi.benchmarks import get_template
from kaoshi.benchmarks.common.exam_jsonl import load_kaoshi_jsonl
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Exam, Question, QuestionType, parse_question_type
from kaoshi.finetune.examples import target_text
from kaoshi.prompts import RenderOptions, answer_candidates
from kaoshi.qtypes import extract_answer, grade_answer, kind_of
from kaoshi.qtypes.cloze import normalize_blank
from kaoshi.runner.llm_extract import extractor_prompt
from kaoshi.scoring import Extraction
from tests.support.files import write_jsonl

UNPARSED = "<unparsed>"
ONE_BLANK = Question("c1", QuestionType.CLOZE, "已知 $2x+3=11$，则 $x=$____.", answer="4", points=5)
TWO_BLANKS = Question(
    "c2",
    QuestionType.CLOZE,
    "等差数列 $1,3,5, \\cdots$ 的第 4 项为____，前 4 项和为____.",
    answer="7;16",
    explanation="公差为 2，第 4 项为 7，前 4 项和为 16。",
)
FRACTION = Question("c3", QuestionType.CLOZE, "$\\sin 30^{\\circ}=$____.", answer="$\\frac{1}{2}$")
COSINE = Question("c4", QuestionType.CLOZE, "$\\cos 150^{\\circ}=$____.", answer="-\\frac{\\sqrt{3}}{2}")
ANGLE = Question(
    "c5", QuestionType.CLOZE, "直角三角形的一个锐角为 $80^{\\circ}$，另一个为____.", answer="10^{\\circ}"
)
HALF = Question("c6", QuestionType.CLOZE, "$1\\div 2=$____（用小数表示）.", answer="0.5")
LENGTH = Question("c7", QuestionType.CLOZE, "边长为 3 cm 的正方形周长为____.", answer="12")
POINT = Question("c8", QuestionType.CLOZE, "直线 $y=x+1$ 与 $y=2x$ 的交点为____.", answer="(1,2)")
THOUSAND = Question("c9", QuestionType.CLOZE, "$10^{3}=$____.", answer="1,000")
POINT_AND_COUNT = Question("c10", QuestionType.CLOZE, "两直线的交点为____，交点个数为____.", answer="(1,2);1")


def test_cloze_is_a_built_in_type() -> None:
    kind = kind_of(QuestionType.CLOZE)
    assert kind.name == "cloze" and kind_of("cloze") is kind
    assert (QuestionType.CLOZE.is_objective, QuestionType.CLOZE.is_choice) == (True, False)
    assert kind.ranking is None and answer_candidates(ONE_BLANK) == ()
    for alias in ("cloze", "填空题", "填空", "fill_in_the_blank", " Cloze "):
        assert parse_question_type(alias) is QuestionType.CLOZE


@pytest.mark.parametrize(
    ("value", "expected"),
    [(" 7;16 ", "7;16"), ("$\\frac{1}{2}$", "$\\frac{1}{2}$"), ("3；4", "3；4")],
)
def test_gold_answers(value: object, expected: str) -> None:
    assert kind_of(QuestionType.CLOZE).parse_gold(value) == expected


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("", "an open question needs a non-empty reference answer"),
        (None, "an open question needs a non-empty reference answer"),
        ("7;;16", "cloze answer '7;;16' has an empty blank"),
        ("7; $ $", "has an empty blank"),
    ],
)
def test_bad_gold_answers(value: object, reason: str) -> None:
    with pytest.raises(FieldError, match=reason.replace("(", r"\(").replace("$", r"\$")) as info:
        kind_of(QuestionType.CLOZE).parse_gold(value)
    assert info.value.field == "answer"


# Each row: a reply as a model writes it, and the answer that must be read from it.
REPLIES: list[tuple[Question, str, str]] = [
    # chat models: working, then a stated answer
    (ONE_BLANK, "解：由 2x+3=11 得 2x=8，所以 x=4。\n\n答案：4", "4"),
    (ONE_BLANK, "移项得 2x = 8，因此 x = 4。\n最终答案是 4。", "4"),
    (ONE_BLANK, "答案：4\n解析：11-3=8，8÷2=4。", "4"),
    (ONE_BLANK, "【答案】4\n【解析】由题意得 x=4。", "4"),
    (ONE_BLANK, "答案：\n$4$", "$4$"),
    (ONE_BLANK, "答案是 4，因为 2×4+3=11。", "4"),
    (TWO_BLANKS, "公差 d=2，a4=7，S4=16。\n答案：7；16", "7;16"),
    (TWO_BLANKS, "第 4 项为 $\\boxed{7}$，前 4 项和为 $\\boxed{16}$。", "7;16"),
    (FRACTION, "$\\sin 30^{\\circ}=\\dfrac{1}{2}$，故答案为 $\\dfrac{1}{2}$。", "$\\dfrac{1}{2}$"),
    # English
    (ONE_BLANK, "Subtract 3 and divide by 2.\nThe answer is 4.", "4"),
    (FRACTION, "We know sin 30° = 1/2.\nFinal answer: $\\boxed{\\frac{1}{2}}$", "\\frac{1}{2}"),
    (TWO_BLANKS, "Answer: 7; 16", "7; 16"),
    # base models continuing the prompt's '答案：' and writing the next question on
    (ONE_BLANK, "4\n\n问题：已知 $3y=12$，则 $y=$____.\n答案：4", "4"),
    (TWO_BLANKS, "7;16\n\n问题 3.   求 1+2+3 的值____.\n答案是 6", "7;16"),
    (ONE_BLANK, " $4$ ", "$4$"),
    # reasoning models: a wrong value first, inside and outside the think block
    (
        ONE_BLANK,
        "<think>\n试 x=5：2×5+3=13，不对。再试 x=4：11，对。答案：5 不成立。\n</think>\n答案：4",
        "4",
    ),
    (ONE_BLANK, "<think>先算出 \\boxed{5}，检验不对</think>\\boxed{4}", "4"),
    (ONE_BLANK, "一开始我得到 x=\\boxed{5}，检验后发现算错了。\n答案：4", "4"),
    (ONE_BLANK, "初看答案是 5，但 2×5+3=13≠11。重新计算，答案是 4。", "4"),
    # full-width text is read half-width
    (TWO_BLANKS, "答案：７；１６", "7;16"),
    # nothing to read
    (ONE_BLANK, "这道题需要先移项。\n然后两边同时除以 2。", UNPARSED),
    (ONE_BLANK, "解：\n移项得 2x=8", UNPARSED),
    (ONE_BLANK, "", UNPARSED),
    (ONE_BLANK, "无", UNPARSED),
    # a base model writing prose instead of the answer (smollm2 did): nothing read, so the LLM extractor may
    (ONE_BLANK, "The given equation is $2x+3=11$, which is a linear equation with a variable.", UNPARSED),
    (ONE_BLANK, "因为两边同时减去三再除以二所以得到四", UNPARSED),
    (ONE_BLANK, "x = 4", "x = 4"),
    (ONE_BLANK, "<think>x 应该是 4", UNPARSED),
    # several blanks written with ',' / '，' / '和', or labelled, read as ';'-separated blanks
    (TWO_BLANKS, "答案：7, 16", "7;16"),
    (TWO_BLANKS, "a4=7，S4=16。\n答案：7，16", "7;16"),
    (TWO_BLANKS, "答案是 7 和 16。", "7;16"),
    (TWO_BLANKS, "Answer: 7, 16", "7;16"),
    (TWO_BLANKS, "7，16\n\n问题 3.   求 1+2+3 的值____.\n答案是 6", "7;16"),
    (TWO_BLANKS, "第一空答案：7，第二空答案：16", "7;16"),
    (TWO_BLANKS, "第一空：7；第二空：16", "7;16"),
    (TWO_BLANKS, "第1空填 $7$。\n第2空填 $16$。", "$7$;$16$"),
    (TWO_BLANKS, "Blank 1: 7\nBlank 2: 16", "7;16"),
    (
        TWO_BLANKS,
        "<think>\n第一空是 5？不对，a4=1+3×2=7。\n</think>\n\n第一空答案：7，第二空答案：16",
        "7;16",
    ),
    (TWO_BLANKS, "第一空：5，第二空：12\n检查后发现算错了。\n答案：7；16", "7;16"),  # the last statement
    (TWO_BLANKS, "答案：7, 16, 25", "7, 16, 25"),  # three values for two blanks: not split
    (POINT_AND_COUNT, "答案：(1, 2), 1", "(1, 2);1"),
    # one blank: a comma inside brackets or a number is no separator
    (POINT, "答案：(1, 2)", "(1, 2)"),
    (POINT, "(1, 2)", "(1, 2)"),
    (THOUSAND, "答案：1,000", "1,000"),
]


@pytest.mark.parametrize(("question", "reply", "expected"), REPLIES)
def test_extraction(question: Question, reply: str, expected: str) -> None:
    result = extract_answer(question, reply)
    if expected == UNPARSED:
        assert result == Extraction(None, "unparsed")
    else:
        assert result == Extraction(expected, "ok")


def test_an_echoed_prompt_is_not_read_as_the_answer() -> None:
    prompt = "问题：已知 $2x+3=11$，则 $x=$____.\n答案："
    assert extract_answer(ONE_BLANK, prompt + "4", prompt) == Extraction("4", "ok")


# (reference, answer, correct) under the documented normalisation
GRADES = [
    ("4", "4", True),
    ("4", " 4 。", True),
    ("$\\frac{1}{2}$", "\\dfrac{1}{2}", True),
    ("\\frac{1}{2}", "$\\tfrac{1}{2}$", True),
    ("\\left(0,1\\right)", "(0, 1)", True),
    ("(1,2)", "（1，2）", True),
    ("x^{2}+1", "x^{2} + 1", True),
    ("7;16", "7；16", True),
    ("7;16", " 7 ; 16 ", True),
    ("7;16", "16;7", False),  # blanks in order
    ("7;16", "7", False),  # every blank
    ("7;16", "7;16;0", False),
    # as lenient as AGIEval's math-equivalence check
    ("\\frac{1}{2}", "$\\boxed{\\frac12}$", True),
    ("-\\frac{\\sqrt{3}}{2}", "$-\\frac{\\sqrt3}{2}$", True),
    ("4", "x=4", True),  # a leading single-variable assignment
    ("4", "x = 4", True),
    ("10^{\\circ}", "$10^\\circ$", True),
    ("10^{\\circ}", "10°", True),
    ("\\frac{1}{2}", "1/2", True),  # a quotient of integers
    ("-\\frac{3}{4}", "-3/4", True),
    ("\\frac{1}{2}", "0.5", True),  # AGIEval's one numeric equivalence
    ("\\frac{1}{2}", "\\frac12", True),
    ("0.5", ".5", True),  # the leading zero
    ("0.3", ".3", True),
    ("12", "12\\text{ cm}", True),  # units after the value
    ("12", "$12 \\text{ cm}$", True),
    ("9", "9\\text{ cm}^{2}", True),
    ("\\frac{3}{4}", "\\dfrac34", True),
    ("2\\sqrt{2}", "2 \\sqrt 2", True),
    ("\\frac{\\pi}{3}", "\\frac\\pi3", True),
    ("25\\%", "25%", True),
    ("7;16", "7, 16", True),  # several blanks separated the way replies separate them
    ("7;16", "7和16", True),
    # still different
    ("4", "x=y=4", False),  # an equation, not an assignment
    ("\\frac{1}{4}", "0.25", False),  # nothing is computed
    ("2x+2", "2(x+1)", False),
    ("\\frac{\\sqrt{3}}{2}", "-\\frac{\\sqrt{3}}{2}", False),
    ("(1,2)", "1, 2", False),  # one blank: the comma separates nothing
    ("1,000", "1000", False),
    ("4", "5", False),
]


@pytest.mark.parametrize(("reference", "answer", "correct"), GRADES)
def test_grading_blank_by_blank(reference: str, answer: str, correct: bool) -> None:
    question = Question("q", QuestionType.CLOZE, "____", answer=reference, points=3)
    assert grade_answer(question, answer) == (grade_answer(question, answer, "f1"))
    grade = grade_answer(question, answer)
    assert (grade.correct, grade.points) == (correct, 3.0 if correct else 0.0)


def test_normalisation_steps() -> None:
    assert normalize_blank(" $ \\dfrac{ 1 }{ 2 } $ 。") == "\\frac{1}{2}"
    assert normalize_blank("\\left[ 1 , 2 \\right)") == "[1,2)"
    assert normalize_blank("ａ\\!+\\,ｂ") == "a+b"
    assert normalize_blank("$\\boxed{-\\frac{\\sqrt3}{2}}$") == "-\\frac{\\sqrt{3}}{2}"
    assert normalize_blank("x^{\\frac12}+\\sqrt[3]2") == "x^{\\frac{1}{2}}+\\sqrt[3]{2}"
    assert normalize_blank("y = .5") == "\\frac{1}{2}"
    assert grade_answer(ONE_BLANK, None).correct is False


# A reply as a model writes it, read and graded: (question, reply, correct).
GRADED_REPLIES: list[tuple[Question, str, bool]] = [
    # chat models
    (FRACTION, "$\\sin 30^{\\circ}=\\frac12$，所以答案是 $\\boxed{\\frac12}$。", True),
    (COSINE, "150° 在第二象限，余弦为负。\n答案：$-\\frac{\\sqrt3}{2}$", True),
    (ONE_BLANK, "移项得 2x=8。\n答案：x=4", True),
    (LENGTH, "周长为 4×3=12 cm。\n答案：$12\\text{ cm}$", True),
    (TWO_BLANKS, "公差为 2，所以第 4 项为 7，前 4 项和为 1+3+5+7=16。\n答案：7, 16", True),
    (TWO_BLANKS, "第一空答案：7，第二空答案：16", True),
    (TWO_BLANKS, "答案：16, 7", False),  # blanks in order
    (COSINE, "答案：$\\frac{\\sqrt3}{2}$", False),
    # English
    (FRACTION, "We know that sin 30° is one half.\nFinal answer: 1/2", True),
    (HALF, "1 divided by 2 is .5\nThe answer is .5", True),
    (POINT, "Solving x+1=2x gives x=1, y=2.\nThe answer is (1, 2).", True),
    # base models continuing '答案：' or AGIEval's '答案是 '
    (ANGLE, "$10^\\circ$\n\n问题：直角三角形的一个锐角为 $30^{\\circ}$，另一个为____.", True),
    (THOUSAND, "1,000", True),
    (TWO_BLANKS, "7，16", True),
    # reasoning models
    (FRACTION, "<think>\nsin 30° = 0.5，写成分数。\n</think>\n\n答案：$\\dfrac{1}{2}$", True),
    (ONE_BLANK, "<think>2x=8, so x=4.</think>\nThe answer is $x = 4$.", True),
    (TWO_BLANKS, "<think>\na4 = 7, S4 = 16\n</think>\n第一空：7；第二空：16", True),
    (ANGLE, "<think>90-80=10</think>\\boxed{10^\\circ}", True),
]


@pytest.mark.parametrize(("question", "reply", "correct"), GRADED_REPLIES)
def test_replies_graded_like_agieval(question: Question, reply: str, correct: bool) -> None:
    result = extract_answer(question, reply)
    assert result.status == "ok", result
    assert grade_answer(question, result.answer).correct is correct, result


def test_wording_in_kaoshis_prompts(tmp_path: Path) -> None:
    exam = Exam("e", (ONE_BLANK,), (TWO_BLANKS,))
    plain = get_template("default").render(ONE_BLANK, exam, RenderOptions(shots=1)).text
    assert plain == (
        "以下是填空题，请写出空白处应填的内容；有多个空时，按顺序填写，用“;”隔开。\n\n"
        "等差数列 $1,3,5, \\cdots$ 的第 4 项为____，前 4 项和为____.\n答案：7;16\n\n"
        "已知 $2x+3=11$，则 $x=$____.\n答案："
    )
    lhmke = get_template("lhmke").render(ONE_BLANK, exam, RenderOptions(shots=0)).text
    assert lhmke == (
        "请回答下面的填空题。先写“答案：”和所填内容（有多个空时按顺序填写，用“;”隔开），再在“解析：”后说明理由。"
        "\n\n题目：已知 $2x+3=11$，则 $x=$____.\n答案："
    )
    template = tmp_path / "mine.j2"
    template.write_text("{{ type_zh }}（{{ type }}）", encoding="utf-8")
    assert get_template(str(template)).render(ONE_BLANK, exam, RenderOptions(0)).text == "填空题（cloze）"
    assert "只输出它最终填写的内容，有多个空时按顺序用“;”隔开" in extractor_prompt(ONE_BLANK, "x 是 4")
    assert extract_answer(ONE_BLANK, "无") == Extraction(None, "unparsed")  # the LLM extractor's 'none'


def test_fine_tuning_target() -> None:
    assert target_text(TWO_BLANKS, with_explanation=False) == "7;16"
    assert (
        target_text(TWO_BLANKS, with_explanation=True)
        == "7;16\n解析：公差为 2，第 4 项为 7，前 4 项和为 16。"
    )


def test_cloze_rows_in_kaoshis_schema_and_a_loglik_run(tmp_path: Path) -> None:
    exam_file = write_jsonl(
        tmp_path / "exam.jsonl",
        [
            {"id": "1", "type": "填空题", "question": "1+1=____", "answer": "2", "points": 2},
            {"id": "2", "type": "cloze", "question": "2+2=____；3+3=____", "answer": "4；6"},
            {"id": "3", "type": "judge", "question": "3 是偶数。", "answer": "错误"},
        ],
    )
    exam = load_kaoshi_jsonl(exam_file).exam
    assert [(q.type, q.answer) for q in exam.questions[:2]] == [
        (QuestionType.CLOZE, "2"),
        (QuestionType.CLOZE, "4；6"),
    ]
    assert Question.from_content(exam.questions[1].content()) == exam.questions[1]
    script = write_jsonl(
        tmp_path / "mock.jsonl",
        [
            {"id": "1", "response": "答案：2"},
            {"id": "2", "response": "<think>先写 4;5</think>答案：4; 6"},
            {"id": "3", "logprobs": {"正确": -2.0, "错误": -0.1}},
        ],
    )
    result = kaoshi.evaluate(exam, f"mock:{script}", method="loglik")
    by_id = {s.question_id: (s.qtype, s.answer, s.extracted_by, s.correct, s.score) for s in result.samples}
    assert by_id == {
        "1": ("cloze", "2", "rules", True, 2.0),
        "2": ("cloze", "4; 6", "rules", True, 1.0),
        "3": ("judge", False, "loglik", True, 1.0),
    }
    assert result.summary.groups["type"]["cloze"].accuracy == 1.0


_ALPHABET = st.sampled_from(
    [
        *"0123456789x=;；$ {}\\\n。.:：",
        "答案",
        "是",
        "问题：",
        "\\boxed{",
        "\\frac",
        "<think>",
        "</think>",
        "解析：",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
@example("\\boxed{" * 3000)
@example("答案" + " " * 5000 + "x")
def test_any_reply_gives_text_or_none(reply: str) -> None:
    for question in (ONE_BLANK, TWO_BLANKS):
        result = extract_answer(question, reply)
        assert (result.status, result.answer is None) in (("ok", False), ("unparsed", True))
        if result.answer is not None:
            assert isinstance(result.answer, str) and result.answer.strip()
            grade_answer(question, result.answer)


def test_degenerate_replies_are_read_in_linear_time() -> None:
    replies = [
        "\\boxed{" * 10000,
        "答案" + " " * 20000 + "x",
        "问题" + " " * 20000,
        "4;" * 10000,
        "第一空答案：" * 10000,
        "第一空：1，第二空：" * 5000,
        "答案：" + "(1," * 10000,
        "答案：" + "\\frac\\sqrt" * 5000,
    ]
    start = time.perf_counter()
    for reply in replies:
        extract_answer(TWO_BLANKS, reply)
    assert time.perf_counter() - start < 10.0
