"""kaoshi's own JSONL exam schema and the bundled sample exam."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.data import DataError, QuestionType
from tests.support.files import write_jsonl

GOOD = [
    {"exam": {"name": "mine", "standard_scores": {"数学": 100}}},
    {"id": "q1", "type": "single", "question": "题一", "options": {"A": "甲", "B": "乙"}, "answer": "B"},
    {
        "id": 2,
        "type": "多选题",
        "question": "题二",
        "options": ["甲", "乙", "丙"],
        "answer": ["A", "C"],
        "points": 2,
    },
    {"id": "q3", "type": "judge", "question": "说法", "answer": False},
    {"id": "q4", "type": "open", "question": "简述", "answer": "参考答案", "points": 5, "subject": "数学"},
    {"id": "d1", "type": "judge", "question": "例题", "answer": "正确", "split": "dev"},
]


def test_schema_round_trip(tmp_path: Path) -> None:
    exam = load_exam_result(None, write_jsonl(tmp_path / "mine.jsonl", GOOD)).exam
    assert exam.name == "mine" and exam.metadata["standard_scores"] == {"数学": 100}
    assert [q.id for q in exam.questions] == ["q1", "2", "q3", "q4"]
    assert [q.id for q in exam.fewshot] == ["d1"]
    q1, q2, q3, q4 = exam.questions
    assert q1.answer == frozenset("B") and q1.points == 1.0 and q1.split == "test"
    assert q2.type is QuestionType.MULTI and q2.options[2] == ("C", "丙") and q2.answer == frozenset("AC")
    assert q3.answer is False
    assert (
        q4.type is QuestionType.OPEN and q4.answer == "参考答案" and q4.points == 5.0 and q4.subject == "数学"
    )


def test_split_selection(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mine.jsonl", GOOD)
    assert [q.id for q in load_exam_result("kaoshi", path, "dev").exam.questions] == ["d1"]
    with pytest.raises(DataError, match="no questions in split 'val' \\(splits present: dev, test\\)"):
        load_exam_result("kaoshi", path, "val")


BAD = [
    (
        {"id": "x", "type": "single", "question": "q", "options": {"A": "a", "B": "b"}, "anwser": "A"},
        "field 'anwser': unknown field (known: answer, category, domain, explanation, group, id, meta, "
        "options, original_letters, points, question, split, subject, type)",
    ),
    (
        {"id": "x", "type": "single", "question": "q", "options": {"A": "a", "B": "b"}, "answer": "C"},
        "field 'answer': answer letter(s) C not among options AB",
    ),
    (
        {"id": "x", "type": "single", "question": "q", "options": {"A": "a", "C": "b"}, "answer": "A"},
        "field 'options': option letters must run AB in order",
    ),
    (
        {"id": "x", "type": "single", "question": "q", "options": ["only"], "answer": "A"},
        "field 'options': a choice question needs 2 to 26 options, got 1",
    ),
    (
        {"id": "x", "type": "single", "question": "q", "answer": "A"},
        "field 'options': missing required field for a choice question",
    ),
    (
        {"id": "x", "type": "judge", "question": "q", "options": ["a", "b"], "answer": "正确"},
        "field 'options': judge questions take no options",
    ),
    (
        {"id": "x", "type": "open", "question": "q", "answer": ""},
        "field 'answer': an open question needs a non-empty reference answer",
    ),
    (
        {"id": "x", "type": "judge", "question": "q", "answer": "正确", "points": 0},
        "field 'points': points must be a positive number, got 0",
    ),
    (
        {"id": "x", "type": "essay", "question": "q", "answer": "a"},
        "field 'type': unknown question type 'essay' "
        "(accepted: single, multi, judge, open, cloze, multi_question "
        "(or 单选题, 多选题, 判断题, 主观题, 填空题, 组合选择题))",
    ),
    ({"id": None, "type": "judge", "question": "q", "answer": "正确"}, "field 'id': missing required field"),
    ({"id": "x", "type": "judge", "question": "  ", "answer": "正确"}, "field 'question': is empty"),
    ({"id": "x", "type": "judge", "question": "q"}, "field 'answer': missing required field"),
    ({"exam": []}, "field 'exam': the exam header must be an object"),
    (
        {"exam": {"standard_scores": {"数学": -1}}},
        "field 'standard_scores': must map subject -> positive number",
    ),
]


@pytest.mark.parametrize(("row", "message"), BAD)
def test_bad_rows(tmp_path: Path, row: object, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD[1], row])
    with pytest.raises(DataError) as info:
        load_exam_result("kaoshi", path)
    assert [str(e) for e in info.value.errors] == [f"{path}:2: {message}"]


def test_every_bad_row_is_reported_and_good_ones_kept(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [GOOD[1], BAD[0][0], GOOD[3], BAD[1][0], "not json", GOOD[1]])
    result = load_exam_result("kaoshi", path, on_invalid="skip")
    assert [q.id for q in result.exam.questions] == ["q1", "q3"]
    assert [(e.line, e.field) for e in result.errors] == [(2, "anwser"), (4, "answer"), (5, None), (6, "id")]


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    with pytest.raises(DataError, match="no valid questions in"):
        load_exam_result("kaoshi", path)


def test_bundled_sample_exam() -> None:
    result = load_exam_result("sample")
    exam = result.exam
    assert result.errors == ()
    assert len(exam) >= 40
    # Every type but those a benchmark brings: cloze (AGIEval's gaokao-mathcloze, tests/unit/test_cloze.py)
    # and sub-question groups (GAOKAO-Bench, tests/benchmarks/gaokao/test_gaokao.py).
    shown = set(QuestionType) - {QuestionType.CLOZE, QuestionType.MULTI_QUESTION}
    assert set(Counter(q.type for q in exam.questions)) == shown
    assert len({q.domain for q in exam.questions}) >= 3
    assert all(q.explanation for q in exam.questions)
    assert {q.points for q in exam.questions} >= {1.0, 2.0, 5.0}
    assert set(Counter(q.type for q in exam.fewshot)) == shown
    assert len(exam.fingerprint) == 64


def test_fingerprint_is_stable_and_content_sensitive(tmp_path: Path) -> None:
    a = load_exam_result(None, write_jsonl(tmp_path / "a.jsonl", GOOD)).exam
    # reordered rows and a different file name: same content, same fingerprint
    b = load_exam_result(None, write_jsonl(tmp_path / "b.jsonl", [GOOD[0], *reversed(GOOD[1:])])).exam
    assert a.fingerprint == b.fingerprint
    changed = [*GOOD[:1], {**GOOD[1], "answer": "A"}, *GOOD[2:]]
    assert (
        load_exam_result(None, write_jsonl(tmp_path / "c.jsonl", changed)).exam.fingerprint != a.fingerprint
    )
