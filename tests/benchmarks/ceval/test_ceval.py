"""C-Eval folders in the published layout: {split}/{subject}_{split}.csv."""

from __future__ import annotations

from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.ceval.subjects import CEVAL_CATEGORIES, CEVAL_HARD_SUBJECTS, CEVAL_SUBJECTS
from kaoshi.data import DataError
from tests.support.files import CEVAL_HEADER, make_ceval, write_csv


def test_subject_table_facts() -> None:
    assert len(CEVAL_SUBJECTS) == 52
    counts = {c: sum(s.category == c for s in CEVAL_SUBJECTS.values()) for c in CEVAL_CATEGORIES}
    assert counts == {"STEM": 20, "Social Science": 10, "Humanities": 11, "Other": 11}
    assert CEVAL_SUBJECTS["computer_network"] == ("Computer Network", "计算机网络", "STEM")
    assert len(CEVAL_HARD_SUBJECTS) == 8 and set(CEVAL_HARD_SUBJECTS) <= set(CEVAL_SUBJECTS)


def test_val_split_with_dev_pool(tmp_path: Path) -> None:
    exam = load_exam_result("ceval", make_ceval(tmp_path / "ceval-exam"), "val").exam
    assert len(exam) == 6 and len(exam.fewshot) == 10
    first = exam.questions[0]
    assert first.id == "college_physics/0"
    assert first.subject == "college_physics" and first.category == "STEM" and first.split == "val"
    assert first.options == (("A", "1"), ("B", "2"), ("C", "3"), ("D", "4"))
    assert first.answer == frozenset("C")
    assert exam.fewshot[0].explanation == "解析0"
    # the quoted multi-line question keeps its line break, and the row after it has the right line number
    second, third = exam.questions[1], exam.questions[2]
    assert second.stem == "第二题，\n含换行____"
    assert second.source is not None and second.source.line == 3
    assert third.source is not None and third.source.line == 5


def test_test_split_has_no_answers(tmp_path: Path) -> None:
    exam = load_exam_result("ceval", make_ceval(tmp_path / "c"), "test").exam
    assert len(exam) == 2 and all(q.answer is None for q in exam.questions)


def test_subject_filter_and_hard_subset(tmp_path: Path) -> None:
    root = make_ceval(tmp_path / "c")
    assert {
        q.subject
        for q in load_exam_result("ceval", root, "val", subjects=["computer_network"]).exam.questions
    } == {"computer_network"}
    hard = load_exam_result("ceval-hard", root, "val").exam
    assert hard.name == "ceval-hard" and {q.subject for q in hard.questions} == {"college_physics"}
    assert "college_physics" in CEVAL_HARD_SUBJECTS


def test_bom_and_crlf(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = write_csv(
        root / "val" / "law_val.csv", CEVAL_HEADER, [["0", "题____", "1", "2", "3", "4", "B", ""]], bom=True
    )
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    exam = load_exam_result("ceval", root, "val").exam
    assert exam.questions[0].id == "law/0" and exam.questions[0].category == "Humanities"


def test_detected_from_a_folder(tmp_path: Path) -> None:
    assert load_exam_result(None, make_ceval(tmp_path / "c"), "val").exam.name == "ceval"


def test_bad_rows(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = write_csv(
        root / "val" / "law_val.csv",
        CEVAL_HEADER,
        [
            ["0", "好题____", "1", "2", "3", "4", "B", ""],
            ["1", "无答案____", "1", "2", "3", "4", "", ""],
            ["2", "坏答案____", "1", "2", "3", "4", "E", ""],
            ["3", "", "1", "2", "3", "4", "A", ""],
            ["0", "重复____", "1", "2", "3", "4", "A", ""],
            ["5", "缺选项____", "1", "2", "", "4", "A", ""],
        ],
    )
    with pytest.raises(DataError) as info:
        load_exam_result("ceval", root, "val")
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3: field 'answer': missing answer (only the test split may omit it)",
        f"{path}:4: field 'answer': answer 'E' is not one of A, B, C, D",
        f"{path}:5: field 'question': is empty",
        f"{path}:6: field 'id': duplicate id 'law/0' (first seen at line 2)",
        f"{path}:7: field 'C': is empty",
    ]
    assert [q.id for q in load_exam_result("ceval", root, "val", on_invalid="skip").exam.questions] == [
        "law/0"
    ]


def test_missing_columns_and_folders(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = write_csv(root / "val" / "law_val.csv", ["id", "question", "A", "B"], [["0", "q", "1", "2"]])
    with pytest.raises(DataError) as info:
        load_exam_result("ceval", root, "val")
    assert [str(e) for e in info.value.errors] == [
        f"{path}:1: field 'C': missing column(s) C, D in the header"
    ]
    with pytest.raises(DataError, match="no 'dev' folder"):
        load_exam_result("ceval", root, "dev")
    with pytest.raises(DataError, match="split must be one of dev, val, test"):
        load_exam_result("ceval", root, "train")


def test_unknown_subject_is_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "c"
    write_csv(
        root / "val" / "my_subject_val.csv", CEVAL_HEADER, [["0", "q____", "1", "2", "3", "4", "A", ""]]
    )
    result = load_exam_result("ceval", root, "val")
    assert result.exam.questions[0].category is None
    assert result.warnings == (
        f"{root / 'val' / 'my_subject_val.csv'}: 'my_subject' is not a C-Eval subject; "
        "loaded with no category",
    )


def test_an_unknown_subject_names_the_subjects_there(tmp_path: Path) -> None:
    root = make_ceval(tmp_path / "c")
    with pytest.raises(DataError) as caught:
        load_exam_result("ceval", root, "val", subjects=["computer_netwrk"])
    message = str(caught.value)
    assert "no file for subject(s) computer_netwrk (did you mean computer_network?)" in message
    assert "subjects here: " in message and "computer_network" in message.split("subjects here: ")[1]


def test_an_unclosed_quote_is_named_where_it_opens(tmp_path: Path) -> None:
    # issue 30: the quote on line 3 swallowed the rows after it, and the error said "line 2: field 'A':
    # missing required field"
    root = tmp_path / "c"
    path = root / "val" / "law_val.csv"
    path.parent.mkdir(parents=True)
    rows = [f"{i},第{i}题____,1,2,3,4,B,\n" for i in range(8)]
    rows[1] = '1,"第1题没有闭合的引号____,1,2,3,4,B,\n'
    path.write_text(",".join(CEVAL_HEADER) + "\n" + "".join(rows), encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_exam_result("ceval", root, "val")
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3: field 'question': a quote opened here is never closed (it swallows lines 3-9)"
    ]
    assert [q.id for q in load_exam_result("ceval", root, "val", on_invalid="skip").exam.questions] == [
        "law/0"
    ]
    # closed by a quote further on (a quoted answer): the row is left with too few fields
    text = path.read_text(encoding="utf-8").replace("4,第4题____,1,2,3,4,B", '4,第4题____,1,2,3,4,"B"', 1)
    path.write_text(text, encoding="utf-8")
    result = load_exam_result("ceval", root, "val", on_invalid="skip")
    assert [str(e) for e in result.errors] == [
        f"{path}:3: field 'question': a quote opened here is not closed on its line (it swallows lines 3-6, "
        "leaving the row too few fields)"
    ]
    assert [q.id for q in result.exam.questions] == ["law/0", "law/5", "law/6", "law/7"]
    assert [q.source.line for q in result.exam.questions if q.source] == [2, 7, 8, 9]


def test_quoted_cells_with_line_breaks_still_load(tmp_path: Path) -> None:
    root = tmp_path / "c"
    path = write_csv(
        root / "val" / "law_val.csv",
        CEVAL_HEADER,
        [
            ["0", "第一行，\n第二行, 含逗号____", "1", "2", "3", "4", "B", ""],
            ["1", "题____", "甲\n乙", "2", "3", "4\n\n四", "C", "解析,\n逗号"],
            ["2", "题____", "1", "2", "3", "4", "D", ""],
        ],
    )
    path.write_text(path.read_text(encoding="utf-8") + "\n\n", encoding="utf-8")  # blank lines at the end
    exam = load_exam_result("ceval", root, "val").exam
    assert [(q.stem, q.source.line if q.source else None) for q in exam.questions] == [
        ("第一行，\n第二行, 含逗号____", 2),
        ("题____", 4),
        ("题____", 9),
    ]
    assert exam.questions[1].option_map["D"] == "4\n\n四"
