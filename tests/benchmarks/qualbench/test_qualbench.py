"""QualBench loaders on files written in the published layouts (our own invented rows)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.qualbench.loader import (
    QUALBENCH_PUBLISHED_CLEAN,
    QUALBENCH_PUBLISHED_TOTAL,
    load_qualbench,
    published_count_differences,
)
from kaoshi.cli.main import main
from kaoshi.data import DataError, QuestionType
from kaoshi.data.model import Question
from tests.support.files import QUALBENCH_ORIGINAL, write_jsonl, write_qualbench_json


def test_original_json_array(tmp_path: Path) -> None:
    result = load_qualbench(write_qualbench_json(tmp_path / "QualBench.json", QUALBENCH_ORIGINAL))
    exam = result.exam
    assert [q.id for q in exam.questions] == ["1", "2", "3", "4"]
    single, multi, judge_true, judge_false = exam.questions
    assert single.type is QuestionType.SINGLE
    assert single.stem == "扑救带电设备初起火灾应选用（）。"
    assert single.options == (("A", "清水"), ("B", "泡沫"), ("C", "二氧化碳"), ("D", "砂土"))
    assert single.answer == frozenset("C")
    assert single.domain == "消防" and single.category == "Fire Safety"
    assert single.explanation == "二氧化碳不导电。"
    assert multi.answer == frozenset("ABC") and multi.letters == tuple("ABCDE")
    assert judge_true.answer is True and judge_true.options == ()
    assert judge_false.answer is False
    assert result.errors == () and result.warnings == ()


def test_line_numbers_point_at_each_array_element(tmp_path: Path) -> None:
    path = write_qualbench_json(tmp_path / "QualBench.json", QUALBENCH_ORIGINAL)
    lines = path.read_text().split("\n")
    exam = load_qualbench(path).exam
    for question in exam.questions:
        assert question.source is not None
        assert lines[question.source.line - 1].strip() == "{"
        assert f'"idx": {question.id},' in lines[question.source.line]


def test_shuffled_jsonl(tmp_path: Path) -> None:
    rows = [
        {
            "question": "题干（）。\nA．甲\nB．乙\nC．丙\nD．丁",
            "answer": "B",
            "explan": "因为乙。",
            "type": "单选题",
            "idx": 10,
            "domain": "safety_roduction",
            "sub_domain": "安全生产",
        },
        {
            "question": "说法。",
            "answer": "错误",
            "explan": "",
            "type": "判断题",
            "idx": 11,
            "domain": "fire",
            "sub_domain": "消防",
        },
    ]
    exam = load_exam_result("qualbench", write_jsonl(tmp_path / "QualBench_shuffled.jsonl", rows)).exam
    assert [q.id for q in exam.questions] == ["10", "11"]
    assert exam.questions[0].domain == "安全生产"
    assert exam.questions[0].category == "Production Safety"
    assert exam.questions[0].explanation == "因为乙。"
    assert exam.questions[1].answer is False


def test_detects_qualbench_formats(tmp_path: Path) -> None:
    path = write_qualbench_json(tmp_path / "q.json", QUALBENCH_ORIGINAL)
    assert load_exam_result(None, path).exam.name == "qualbench"
    row = {"question": "说法。", "answer": "正确", "type": "判断题", "idx": 1, "sub_domain": "安全生产"}
    assert load_exam_result(None, write_jsonl(tmp_path / "s.jsonl", [row])).exam.name == "qualbench"


def test_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    rows = [
        {"question": "说法一。", "answer": "正确", "type": "判断题", "idx": 1, "sub_domain": "安全生产"},
        "",
        {
            "question": "题干\r\nA．甲\r\nB．乙",
            "answer": "A",
            "type": "单选题",
            "idx": 2,
            "sub_domain": "安全生产",
        },
    ]
    path = write_jsonl(tmp_path / "s.jsonl", rows, newline="\r\n", bom=True)
    exam = load_exam_result("qualbench", path).exam
    assert len(exam) == 2
    assert exam.questions[1].options == (("A", "甲"), ("B", "乙"))
    assert exam.questions[1].source is not None and exam.questions[1].source.line == 3


BAD_ROWS = [
    (
        {"question_type": "单选题", "domain": "d", "question": "q\nA．a\nB．b", "answer": "A"},
        "field 'idx': missing required field",
    ),
    (
        {"idx": 5, "question_type": "填空题", "domain": "d", "question": "q", "answer": "A"},
        "field 'question_type': unknown question type '填空题' (QualBench has 单选题, 多选题, 判断题)",
    ),
    (
        {"idx": 5, "question_type": "单选题", "domain": "d", "question": "没有选项", "answer": "A"},
        "field 'question': no options found (expected lines such as 'A．…' after the stem)",
    ),
    (
        {"idx": 5, "question_type": "单选题", "domain": "d", "question": "q\nA．a\nB．b", "answer": "AB"},
        "field 'answer': single-choice answer must be one letter, got 'AB'",
    ),
    (
        {"idx": 5, "question_type": "单选题", "domain": "d", "question": "q\nA．a\nB．b", "answer": ""},
        "field 'answer': missing required field",
    ),
    (
        {"idx": 5, "question_type": "判断题", "domain": "d", "question": "q", "answer": "也许"},
        "field 'answer': true/false answer must be 正确 or 错误 (or true/false), got '也许'",
    ),
    (
        {"idx": 5, "question_type": "多选题", "domain": "d", "question": "q\nA．a\nB．b", "answer": "A1"},
        "field 'answer': answer 'A1' is not option letters (bad character '1')",
    ),
    (
        {"idx": 5, "question_type": "单选题", "domain": "d", "question": 42, "answer": "A"},
        "field 'question': expected text, got int",
    ),
    ([1, 2], "expected a JSON object, got list"),
]


@pytest.mark.parametrize(("row", "message"), BAD_ROWS)
def test_bad_rows_are_reported_with_file_line_field(tmp_path: Path, row: object, message: str) -> None:
    good = {"idx": 1, "question_type": "判断题", "domain": "d", "question": "好的。", "answer": "正确"}
    path = write_jsonl(tmp_path / "bad.jsonl", [good, row])
    with pytest.raises(DataError) as info:
        load_exam_result("qualbench", path)
    assert [str(e) for e in info.value.errors] == [f"{path}:2: {message}"]
    assert "1 invalid row(s)" in str(info.value)
    # skip keeps the good row and returns the bad one
    result = load_exam_result("qualbench", path, on_invalid="skip")
    assert [q.id for q in result.exam.questions] == ["1"]
    assert len(result.errors) == 1


def test_invalid_json_line_and_duplicate_id(tmp_path: Path) -> None:
    good = {"idx": 1, "question_type": "判断题", "domain": "d", "question": "好的。", "answer": "正确"}
    path = write_jsonl(tmp_path / "bad.jsonl", [good, '{"idx": 2, ', good])
    result = load_exam_result("qualbench", path, on_invalid="skip")
    assert [str(e) for e in result.errors] == [
        f"{path}:2: invalid JSON: Expecting property name enclosed in double quotes (column 12)",
        f"{path}:3: field 'id': duplicate id '1' (first seen at line 1)",
    ]


def test_broken_json_array_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "QualBench.json"
    path.write_text('[\n  {"idx": 1,\n   "question": "x"\n  },\n  {"idx": 2 "question": "y"}\n]')
    with pytest.raises(DataError) as info:
        load_exam_result("qualbench", path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:5: invalid JSON: Expecting ',' delimiter (column 13)"
    ]


def test_not_an_array(tmp_path: Path) -> None:
    path = tmp_path / "QualBench.json"
    path.write_text('{"idx": 1}')
    with pytest.raises(DataError, match="expected a JSON array"):
        load_exam_result("qualbench", path)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "gbk.jsonl"
    path.write_bytes('{"idx": 1}\n{"question": "中文"}\n'.encode("gbk"))
    with pytest.raises(DataError) as info:
        load_exam_result("qualbench", path)
    assert str(info.value.errors[0]) == f"{path}:2: invalid UTF-8 byte at offset 25"


def test_cleaning_rule_reports_drops_and_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        *QUALBENCH_ORIGINAL,
        # answer letter outside the options
        {
            "idx": 5,
            "question_type": "单选题",
            "domain": "消防",
            "question": "题\nA．甲\nB．乙",
            "answer": "D",
        },
        # true/false written 对 instead of 正确 (loadable, dropped by the authors' rule)
        {"idx": 6, "question_type": "判断题", "domain": "消防", "question": "另一说法。", "answer": "对"},
        # repeated question text
        {
            "idx": 7,
            "question_type": "判断题",
            "domain": "银行保险",
            "question": "分散投资可以降低非系统性风险。",
            "answer": "正确",
        },
    ]
    path = write_qualbench_json(tmp_path / "QualBench.json", rows)
    raw = load_exam_result("qualbench", path)
    assert len(raw.exam) == 7
    # The row's object opens the line before its "idx" key.
    line = next(n for n, text in enumerate(path.read_text().splitlines()) if '"idx": 5,' in text)
    assert raw.warnings == (
        f"1 row(s) have answer letters outside their options (--clean drops them): {path}:{line} (id 5)",
    )
    assert main(["validate", str(path)]) == 0  # kaoshi validate names the row too
    assert f"warning: {raw.warnings[0]}" in capsys.readouterr().err
    cleaned = load_exam_result("qualbench", path, clean=True)
    assert [q.id for q in cleaned.exam.questions] == ["1", "2", "3", "4"]
    assert [(d.question_id, d.reason) for d in cleaned.dropped] == [
        ("5", "answer letter(s) D not among options AB"),
        ("6", "true/false answer '对' is not 正确 or 错误"),
        ("7", "repeats the question text of id 3"),
    ]


def test_qualbench_has_one_split(tmp_path: Path) -> None:
    path = write_qualbench_json(tmp_path / "QualBench.json", QUALBENCH_ORIGINAL)
    with pytest.raises(DataError, match="single split"):
        load_exam_result("qualbench", path, split="val")


def test_the_real_file_matches_the_published_counts() -> None:
    """Runs where the real QualBench.json is at hand: KAOSHI_QUALBENCH_JSON=/path/to/QualBench.json."""
    path = os.environ.get("KAOSHI_QUALBENCH_JSON")
    if not path or not Path(path).is_file():
        pytest.skip("set KAOSHI_QUALBENCH_JSON to the published QualBench.json to check its counts")
    result = load_qualbench(Path(path))
    assert len(result.exam.questions) == QUALBENCH_PUBLISHED_TOTAL
    assert published_count_differences(list(result.exam.questions)) == []
    assert len(load_qualbench(Path(path), clean=True).exam.questions) == QUALBENCH_PUBLISHED_CLEAN


def test_published_count_differences_name_the_domain() -> None:
    question = Question("1", QuestionType.TRUE_FALSE, "说法。", (), True, domain="消防")
    differences = published_count_differences([question])
    assert "消防: loaded (0, 0, 1) (single, multi, true/false), published (1444, 827, 1130)" in differences
    assert len(differences) == 6
