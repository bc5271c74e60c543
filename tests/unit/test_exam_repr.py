"""An exam's repr is a summary, not every question; a question's repr is bounded however long its text."""

from __future__ import annotations

from kaoshi.data.model import Exam, Question, QuestionType, Source


def _question(i: int, *, stem: str = "题干", type: QuestionType = QuestionType.SINGLE) -> Question:
    return Question(
        id=f"s{i % 67}/{i}",
        type=type,
        stem=stem,
        options=(("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁")),
        answer=frozenset("A"),
        subject=f"s{i % 67}",
        split="test",
        source=Source("data/test/x.csv", i + 2),
        verbatim=(("question", stem),),
    )


def test_exam_repr_is_a_short_summary() -> None:
    questions = tuple(_question(i, stem="长" * 500) for i in range(10_000))
    exam = Exam("cmmlu test", questions, (_question(0),))
    text = repr(exam)
    assert len(text) < 300
    assert text == "Exam('cmmlu test', 10000 questions: 10000 single; 67 subjects; split test; 1 few-shot)"
    assert str(exam) == text  # print(exam) shows the same
    mixed = Exam("mix", (_question(0), _question(1, type=QuestionType.MULTI), _question(2)))
    assert repr(mixed) == "Exam('mix', 3 questions: 2 single, 1 multi; 3 subjects; split test)"
    assert repr(Exam("empty", ())) == "Exam('empty', 0 questions)"


def test_exam_equality_and_fields_are_unchanged() -> None:
    questions = tuple(_question(i) for i in range(3))
    exam = Exam("x", questions, (), {"benchmark": "cmmlu"})
    assert exam == Exam("x", questions, (), {"benchmark": "cmmlu"})
    assert exam != Exam("x", questions[:2], (), {"benchmark": "cmmlu"})
    assert (exam.name, exam.questions, exam.fewshot, exam.metadata) == (
        "x",
        questions,
        (),
        {"benchmark": "cmmlu"},
    )


def test_question_repr_caps_long_texts() -> None:
    huge = _question(0, stem="题" * 1_000_000)
    text = repr(huge)
    assert len(text) < 1_000 and "..." in text
    assert text.startswith("Question(id='s0/0', type=<QuestionType.SINGLE: 'single'>, stem='题题")
    # a short question still shows every field as the dataclass repr did
    short = _question(1)
    assert repr(short) == (
        "Question(id='s1/1', type=<QuestionType.SINGLE: 'single'>, stem='题干', options=(('A', '甲'), "
        "('B', '乙'), ('C', '丙'), ('D', '丁')), answer=frozenset({'A'}), explanation='', points=1.0, "
        "subject='s1', domain=None, category=None, split='test', group=None, original_letters=(), "
        "source=Source(file='data/test/x.csv', line=3), verbatim=(('question', '题干'),))"
    )
