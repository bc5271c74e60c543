"""A question built the way a plugin writes it (issue 44): its gold answer in any form a loader reads from a
file becomes what the grader compares, and a gold of the wrong kind, or letters no option has, is an error
naming the question, never a question graded silently wrong."""

from __future__ import annotations

import pytest

import kaoshi
from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.errors import InputError

OPTIONS = (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁"))


def question(kind: QuestionType, answer: object, options: tuple[tuple[str, str], ...] = OPTIONS) -> Question:
    return Question(id="p1", type=kind, stem="下列哪一项正确？", options=options, answer=answer)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "written", "gold"),
    [
        (QuestionType.SINGLE, "B", frozenset("B")),
        (QuestionType.SINGLE, "b", frozenset("B")),
        (QuestionType.SINGLE, ["B"], frozenset("B")),
        (QuestionType.SINGLE, ("B",), frozenset("B")),
        (QuestionType.SINGLE, {"B"}, frozenset("B")),
        (QuestionType.SINGLE, frozenset("b"), frozenset("B")),
        (QuestionType.SINGLE, "Ｂ", frozenset("B")),  # full-width, as some published files write it
        (QuestionType.SINGLE, frozenset("B"), frozenset("B")),
        (QuestionType.MULTI, "AC", frozenset("AC")),
        (QuestionType.MULTI, "A,C", frozenset("AC")),
        (QuestionType.MULTI, "A、C", frozenset("AC")),
        (QuestionType.MULTI, ["c", "a"], frozenset("AC")),
        (QuestionType.TRUE_FALSE, "正确", True),
        (QuestionType.TRUE_FALSE, "错", False),
        (QuestionType.TRUE_FALSE, "false", False),
        (QuestionType.TRUE_FALSE, True, True),
        (QuestionType.OPEN, "参考答案", "参考答案"),
        (QuestionType.SINGLE, None, None),
    ],
)
def test_a_gold_written_as_a_loader_reads_it_is_the_graders_form(
    kind: QuestionType, written: object, gold: object
) -> None:
    options = OPTIONS if kind in (QuestionType.SINGLE, QuestionType.MULTI) else ()
    assert question(kind, written, options).answer == gold


@pytest.mark.parametrize(
    ("kind", "written", "message"),
    [
        (QuestionType.SINGLE, "E", "names E, not among the options ABCD"),
        (QuestionType.SINGLE, "AB", "single-choice answer must be one letter"),
        (QuestionType.SINGLE, 2, "expected option letters, got int"),
        (QuestionType.SINGLE, True, "expected option letters, got bool"),
        (QuestionType.MULTI, "A?", "is not option letters"),
        (QuestionType.TRUE_FALSE, "也许", "true/false answer must be 正确 or 错误"),
        (QuestionType.OPEN, ["参考"], "a open question's answer is text, got list"),
    ],
)
def test_a_gold_of_the_wrong_kind_names_the_question(
    kind: QuestionType, written: object, message: str
) -> None:
    with pytest.raises(InputError, match=r"question 'p1' \(" + kind.value + r"\): .*" + message):
        question(kind, written)


def test_a_plugins_questions_in_every_form_grade_right() -> None:
    """The bug the issue reports: a plugin's `answer="B"` ran, showed gold B and answer B, and graded wrong.
    Each form of B is now graded right by a model that always answers B."""
    forms: list[object] = ["B", "b", ["B"], ("B",), {"B"}, frozenset("B"), "Ｂ"]
    questions = tuple(
        Question(id=f"q{i}", type=QuestionType.SINGLE, stem=f"第{i}题", options=OPTIONS, answer=form)  # type: ignore[arg-type]
        for i, form in enumerate(forms)
    )
    result = kaoshi.evaluate(Exam("plugin", questions), "constant:B")
    assert [s.correct for s in result.samples] == [True] * len(forms)
    assert result.summary.overall.accuracy == 1.0
