"""CMExam in its published layout (data/train.csv, val.csv, test_with_annotations.csv), on rows we wrote
ourselves: options one per line in one quoted cell, multi-answer letters, BOM, CRLF, bad rows."""

from __future__ import annotations

import csv
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kaoshi
from kaoshi.api.summary import benchmark_metrics
from kaoshi.benchmarks import (
    default_template_name,
    detect_benchmark,
    get_benchmark,
    get_template,
    leaderboard_layout,
    load_exam_result,
)
from kaoshi.benchmarks.cmexam.loader import REQUIRED_COLUMNS, parse_cmexam_options
from kaoshi.cli.main import main
from kaoshi.data import DataError, QuestionType
from kaoshi.data.csvrows import CsvRecord, iter_csv_records
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Question
from kaoshi.prompts import RenderOptions
from kaoshi.qtypes import extract_answer
from kaoshi.report.leaderboard import build_board, leaderboard_table
from tests.support.files import make_ceval

HEADER = ["Question", "Options", "Answer", "Explanation"]
ANNOTATIONS = [
    "Disease Group",
    "Area of Competency",
    "Clinical Department",
    "Medical Discipline",
    "Difficulty level",
]
# Our own questions, in CMExam's shape: the options one per line, "A text".
ROWS = [
    [
        "下列药物中属于β受体阻滞剂的是",
        "A 硝苯地平\nB 美托洛尔\nC 卡托普利\nD 氢氯噻嗪\nE 螺内酯",
        "B",
        "美托洛尔为β1受体阻滞剂。",
    ],
    [
        "缺铁性贫血的典型血象表现为",
        "A 大细胞性贫血\nB 正细胞正色素性贫血\nC 小细胞低色素性贫血\nD 全血细胞减少\nE 网织红细胞明显增多",
        "C",
        "",
    ],
    ["下列属于解表药的有", "A 麻黄\nB 桂枝\nC 大黄\nD 薄荷\nE 黄连", "ABD", "麻黄、桂枝、薄荷均能发散表邪。"],
    [
        "急性阑尾炎最常见的首发症状是",
        "A 转移性右下腹痛\nB 发热\nC 恶心呕吐\nD 腹泻\nE 黄疸",
        "A",
        "腹痛多始于上腹或脐周。",
    ],
]
LABELS = [
    ["循环系统疾病", "药物治疗", "心血管内科", "临床医学", "2"],
    ["血液系统疾病", "疾病诊断", "血液内科", "临床医学", "3"],
    ["", "中药学", "中医科", "中医学", "1"],
    ["消化系统疾病", "疾病诊断", "普通外科", "临床医学", "2"],
]


def write_rows(
    path: Path, header: list[str], rows: list[list[str]], *, newline: str = "\n", bom: bool = False
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator=newline)
        writer.writerow(header)
        writer.writerows([[cell.replace("\n", newline) for cell in row] for row in rows])
    return path


def make_cmexam(root: Path) -> Path:
    """A CMExam repository: data/ with the three split files (train and val without annotations)."""
    write_rows(
        root / "data" / "test_with_annotations.csv",
        HEADER + ANNOTATIONS,
        [r + a for r, a in zip(ROWS, LABELS, strict=True)],
    )
    write_rows(root / "data" / "train.csv", HEADER, ROWS[:3])
    write_rows(root / "data" / "val.csv", HEADER, ROWS[3:])
    return root


def test_the_test_file_with_annotations(tmp_path: Path) -> None:
    root = make_cmexam(tmp_path / "CMExam")
    result = load_exam_result("cmexam", root / "data" / "test_with_annotations.csv")
    exam = result.exam
    assert result.errors == () and exam.metadata["split"] == "test"
    assert [q.id for q in exam.questions] == ["test-1", "test-2", "test-3", "test-4"]
    first, second, multi, _ = exam.questions
    assert first.type is QuestionType.SINGLE and first.answer == frozenset("B")
    assert first.stem == "下列药物中属于β受体阻滞剂的是"
    assert first.options == (
        ("A", "硝苯地平"),
        ("B", "美托洛尔"),
        ("C", "卡托普利"),
        ("D", "氢氯噻嗪"),
        ("E", "螺内酯"),
    )
    assert first.explanation == "美托洛尔为β1受体阻滞剂。" and second.explanation == ""
    assert multi.type is QuestionType.MULTI and multi.answer == frozenset("ABD")
    # Medical Discipline is the subject, Clinical Department the domain; the rest kept as read
    assert (first.subject, first.domain, first.split) == ("临床医学", "心血管内科", "test")
    assert (multi.subject, multi.domain) == ("中医学", "中医科")
    assert first.verbatim_field("Area of Competency") == "药物治疗"
    assert first.verbatim_field("Difficulty level") == "2"
    assert multi.verbatim_field("Disease Group") == ""
    # each quoted Options cell spans five lines: the records start on lines 2, 7, 12, 17
    assert [q.source.line for q in exam.questions if q.source] == [2, 7, 12, 17]


def test_the_repository_the_data_folder_and_the_splits(tmp_path: Path) -> None:
    root = make_cmexam(tmp_path / "CMExam")
    for data in (root, root / "data"):
        assert [q.id for q in load_exam_result("cmexam", data).exam.questions][:1] == [
            "test-1"
        ]  # test by default
        train = load_exam_result("cmexam", data, "train").exam
        assert [q.id for q in train.questions] == ["train-1", "train-2", "train-3"]
        assert train.questions[0].subject is None and train.questions[0].domain is None  # no annotations
        assert [q.id for q in load_exam_result("cmexam", data, "val").exam.questions] == ["val-1"]
    # one file: its name says its split
    assert load_exam_result("cmexam", root / "data" / "val.csv").exam.metadata["split"] == "val"
    with pytest.raises(DataError, match=r"val\.csv holds CMExam's val split, not test"):
        load_exam_result("cmexam", root / "data" / "val.csv", "test")
    with pytest.raises(DataError, match="split must be one of train, val, test, got 'dev'"):
        load_exam_result("cmexam", root, "dev")
    (root / "data" / "val.csv").unlink()
    with pytest.raises(DataError, match=r"no val\.csv here or in"):
        load_exam_result("cmexam", root, "val")
    with pytest.raises(DataError, match="give --data PATH"):
        load_exam_result("cmexam")
    # a file under another name is read as the split asked for, else as the test split
    subset = write_rows(tmp_path / "subset.csv", HEADER, ROWS[:1])
    assert [q.id for q in load_exam_result("cmexam", subset).exam.questions] == ["test-1"]
    assert [q.id for q in load_exam_result("cmexam", subset, "train").exam.questions] == ["train-1"]


def test_bom_and_crlf(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "test_with_annotations.csv", HEADER, ROWS, newline="\r\n", bom=True)
    exam = load_exam_result(None, path).exam
    assert exam.metadata["benchmark"] == "cmexam"
    assert exam.questions[0].options[1] == ("B", "美托洛尔")  # no stray \r
    assert [q.source.line for q in exam.questions if q.source] == [2, 7, 12, 17]


def test_option_line_shapes() -> None:
    # separators seen in Chinese exam files; a letter straight into Chinese text; blank lines skipped
    cell = "A. 甲状腺\nB．乙\n\nC、丙\nD:丁\nE）戊\nF己\nG\u3000庚\nＨ 辛"
    assert parse_cmexam_options(cell) == tuple(
        zip("ABCDEFGH", ["甲状腺", "乙", "丙", "丁", "戊", "己", "庚", "辛"], strict=True)
    )
    assert parse_cmexam_options("A ABO血型不合\nB Rh血型不合") == (("A", "ABO血型不合"), ("B", "Rh血型不合"))


BAD_OPTIONS = [
    ("A 甲\nB 乙\n丙", "line 3 has no option letter (expected 'A text'): '丙'"),
    ("A 甲\nABO血型\nC 丙", "line 2 has no option letter (expected 'A text'): 'ABO血型'"),
    ("A 甲\nB 乙\nB 丙", "line 3 repeats letter B (expected C): 'B 丙'"),
    ("A 甲\nC 丙\nB 乙", "line 2 is out of order: letter C (expected B): 'C 丙'"),
    ("B 乙\nC 丙", "line 1 is out of order: letter B (expected A): 'B 乙'"),
    ("A 甲", "1 option(s); expected 2 to 8 lines 'A text'"),
    ("\n".join(f"{letter} 项" for letter in "ABCDEFGHI"), "9 option(s); expected 2 to 8 lines 'A text'"),
    ("A 甲\nB \nC 丙", "option B is empty"),
]


@pytest.mark.parametrize(("cell", "reason"), BAD_OPTIONS)
def test_bad_options_are_refused(cell: str, reason: str) -> None:
    with pytest.raises(FieldError) as info:
        parse_cmexam_options(cell)
    assert (info.value.field, info.value.reason) == ("Options", reason)


BAD_ROWS = [
    (
        ["题干", "A 甲\nB 乙\n丙", "A", ""],
        "field 'Options': line 3 has no option letter (expected 'A text'): '丙'",
    ),
    (["题干", "A 甲\nB 乙", "C", ""], "field 'Answer': answer 'C' names C, not among the options AB"),
    (
        ["题干", "A 甲\nB 乙", "A1", ""],
        "field 'Answer': answer 'A1' is not option letters (bad character '1')",
    ),
    (["题干", "A 甲\nB 乙", "AA", ""], "field 'Answer': answer 'AA' repeats a letter"),
    (["题干", "A 甲\nB 乙", " ", ""], "field 'Answer': is empty"),
    (["", "A 甲\nB 乙", "A", ""], "field 'Question': is empty"),
    (["题干", "", "A", ""], "field 'Options': is empty"),
    (["题干", "A 甲\nB 乙"], "field 'Answer': missing required field"),  # a short row
]


@pytest.mark.parametrize(("row", "message"), BAD_ROWS)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, row: list[str], message: str) -> None:
    path = write_rows(tmp_path / "test_with_annotations.csv", HEADER, [ROWS[0], row, ROWS[3]])
    with pytest.raises(DataError) as info:
        load_exam_result("cmexam", path)
    assert [str(e) for e in info.value.errors] == [f"{path}:7: {message}"]
    # skipped, the other rows keep their ids: a record's number counts the bad one too
    result = load_exam_result("cmexam", path, on_invalid="skip")
    assert [q.id for q in result.exam.questions] == ["test-1", "test-3"]


def test_header_and_csv_problems(tmp_path: Path) -> None:
    no_options = write_rows(tmp_path / "a.csv", ["Question", "Answer"], [["题干", "A"]])
    with pytest.raises(DataError) as info:
        load_exam_result("cmexam", no_options)
    assert [str(e) for e in info.value.errors] == [
        f"{no_options}:1: field 'Options': missing column(s) Options in the header"
    ]
    repeated = write_rows(tmp_path / "b.csv", HEADER, [ROWS[0], HEADER, ROWS[3], [*ROWS[1], "多余"]])
    result = load_exam_result("cmexam", repeated, on_invalid="skip")
    assert [str(e) for e in result.errors] == [
        f"{repeated}:7: the header row is repeated here",
        f"{repeated}:13: row has more fields than the header",
    ]
    assert [q.id for q in result.exam.questions] == ["test-1", "test-3"]
    huge = write_rows(
        tmp_path / "c.csv", HEADER, [ROWS[0], ["题干", "A " + "长" * 131_072 + "\nB 乙", "A", ""]]
    )
    result = load_exam_result("cmexam", huge, on_invalid="skip")
    assert [q.id for q in result.exam.questions] == ["test-1"]
    assert [str(e) for e in result.errors] == [
        f"{huge}:7: a field is longer than the limit of 131,072 characters"
    ]
    gbk = tmp_path / "gbk.csv"
    gbk.write_bytes("Question,Options,Answer\n题干,A 甲,A\n".encode("gbk"))
    with pytest.raises(DataError, match="not UTF-8"):
        load_exam_result("cmexam", gbk)


def test_csv_records_count_from_the_header_and_skip_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text('Question,Options,Answer\n\n"一\n行",x,A\n,,\n二,y,B\n', encoding="utf-8")
    records = list(iter_csv_records(path, REQUIRED_COLUMNS))
    # a blank line is no record; a row of empty cells is one, so the next record is number 3
    assert [(r.line, r.number, r.cells["Question"]) for r in records if isinstance(r, CsvRecord)] == [
        (3, 1, "一\n行"),
        (6, 3, "二"),
    ]
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("Question,Options,Answer,Answer\n题,A 甲,A,B\n", encoding="utf-8")
    assert [str(e) for e in iter_csv_records(repeated, REQUIRED_COLUMNS)] == [
        f"{repeated}:1: field 'Answer': column(s) Answer repeated in the header"
    ]


def test_detection(tmp_path: Path) -> None:
    root = make_cmexam(tmp_path / "CMExam")
    assert detect_benchmark(root) == detect_benchmark(root / "data") == "cmexam"
    assert detect_benchmark(root / "data" / "train.csv") == "cmexam"
    # other CSV files and folders are not CMExam's
    other = write_rows(tmp_path / "other.csv", ["id", "question", "answer"], [["1", "q", "A"]])
    assert detect_benchmark(other) == "kaoshi"
    assert detect_benchmark(make_ceval(tmp_path / "ceval-exam")) == "ceval"
    assert get_benchmark("cmexam").detect is not None


@given(st.text(alphabet="ABCＡ HI甲乙.．、:\n\t\u3000", max_size=40))
def test_any_options_cell_parses_or_is_refused_clearly(cell: str) -> None:
    try:
        options = parse_cmexam_options(cell)
    except FieldError as exc:
        assert exc.field == "Options" and exc.reason
        return
    assert [letter for letter, _ in options] == [chr(ord("A") + i) for i in range(len(options))]
    assert 2 <= len(options) <= 8 and all(text.strip() for _, text in options)


cells = st.text(alphabet='AB甲乙 \n",\r', max_size=16)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(cells, min_size=0, max_size=5), max_size=5))
def test_any_rows_load_or_are_reported_with_file_and_line(rows: list[list[str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "test_with_annotations.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows([HEADER, *rows])
        try:
            result = load_exam_result("cmexam", path, on_invalid="skip")
        except DataError as exc:
            assert str(path) in str(exc)
            return
        assert all(e.file == str(path) and e.line is not None and e.reason for e in result.errors)


# CMExam's own texts (williamliujl/CMExam src/evaluation/evaluate_chatglm_result.py), written out by hand.
SINGLE_HEAD = (
    "返回限制：只返回两行。"
    "假设你是一位医疗行业专家，请回答下列问题，注意是单选题，只需要返回一个最合适的选项。\n"
)
SINGLE_TAIL = (
    "\n注意，结果只有两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解释。"
    "输出格式限制为：“答案：”，“解释：”。\n注意，题目是单选题，若有多个合适的答案，只返回最准确的即可。"
)
MULTI_HEAD = "假设你是一位医疗行业专家，请回答下列问题。注意，该问题是多选题\n"
MULTI_TAIL = (
    "\n注意，请给出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。"
    "输出格式限制为“答案：”，“解释：”"
)


def test_the_default_prompt_is_cmexams_own(tmp_path: Path) -> None:
    assert default_template_name("cmexam") == "cmexam"
    exam = load_exam_result("cmexam", make_cmexam(tmp_path / "CMExam")).exam
    template = get_template("cmexam")
    assert (template.version, template.default_shots) == (1, 0)
    single = template.render(exam.questions[0], exam, RenderOptions(shots=0))
    assert single.text == (
        "返回限制：只返回两行。假设你是一位医疗行业专家，请回答下列问题，注意是单选题，只需要返回一个最合适的选项。\n"
        "下列药物中属于β受体阻滞剂的是:\n"
        "A 硝苯地平\n"
        "B 美托洛尔\n"
        "C 卡托普利\n"
        "D 氢氯噻嗪\n"
        "E 螺内酯\n"
        "注意，结果只有两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解释。"
        "输出格式限制为：“答案：”，“解释：”。\n"
        "注意，题目是单选题，若有多个合适的答案，只返回最准确的即可。"
    )
    multi = template.render(exam.questions[2], exam, RenderOptions(shots=0))
    assert multi.text == (
        "假设你是一位医疗行业专家，请回答下列问题。注意，该问题是多选题\n"
        "下列属于解表药的有:\n"
        "A 麻黄\n"
        "B 桂枝\n"
        "C 大黄\n"
        "D 薄荷\n"
        "E 黄连\n"
        "注意，请给出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。输出格式限制为“答案：”，“解释：”"
    )
    assert single.shots == multi.shots == 0 and single.messages is None
    # zero-shot, as CMExam's script is: exemplars asked for are not sent
    assert template.render(exam.questions[2], exam, RenderOptions(shots=3)) == multi
    assert template.answer_end(chat=False) == template.answer_end(chat=True) == "\n解释："


def test_the_cmexam_prompt_in_chat_is_one_user_message(tmp_path: Path) -> None:
    exam = load_exam_result("cmexam", make_cmexam(tmp_path / "CMExam")).exam
    template = get_template("cmexam")
    chat = template.render(exam.questions[3], exam, RenderOptions(shots=0, chat=True))
    assert chat.messages == (
        (
            "user",
            "返回限制：只返回两行。假设你是一位医疗行业专家，请回答下列问题，注意是单选题，只需要返回一个最合适的选项。\n"
            "急性阑尾炎最常见的首发症状是:\n"
            "A 转移性右下腹痛\nB 发热\nC 恶心呕吐\nD 腹泻\nE 黄疸\n"
            "注意，结果只有两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解释。"
            "输出格式限制为：“答案：”，“解释：”。\n"
            "注意，题目是单选题，若有多个合适的答案，只返回最准确的即可。",
        ),
    )
    # --system is kaoshi's: a system message in chat, the first line in completion
    multi = exam.questions[2]
    body = MULTI_HEAD + "下列属于解表药的有:\nA 麻黄\nB 桂枝\nC 大黄\nD 薄荷\nE 黄连" + MULTI_TAIL
    system = template.render(multi, exam, RenderOptions(shots=0, chat=True, system="你是医生。"))
    assert system.messages == (("system", "你是医生。"), ("user", body))
    assert (
        template.render(multi, exam, RenderOptions(shots=0, system="你是医生。")).text
        == "你是医生。\n" + body
    )


def test_the_cmexam_prompt_uses_the_cells_as_read(tmp_path: Path) -> None:
    # the Options cell as written ('A.' separators, a blank line), the question unstripped
    row = [" 下列{属于}解表药的有 ", "A. 麻黄\nB. 桂枝\n\nC. 大黄", "AB", ""]
    exam = load_exam_result("cmexam", write_rows(tmp_path / "val.csv", HEADER, [row])).exam
    [question] = exam.questions
    text = get_template("cmexam").render(question, exam, RenderOptions(shots=0)).text
    assert text == MULTI_HEAD + " 下列{属于}解表药的有 :\nA. 麻黄\nB. 桂枝\n\nC. 大黄" + MULTI_TAIL
    # without the cells (options shuffled, another benchmark's question): kaoshi's stem, 'A text' lines
    bare = replace(question, verbatim=())
    text = get_template("cmexam").render(bare, exam, RenderOptions(shots=0)).text
    assert text == MULTI_HEAD + "下列{属于}解表药的有:\nA 麻黄\nB 桂枝\nC 大黄" + MULTI_TAIL
    single = replace(bare, type=QuestionType.SINGLE, answer=frozenset("A"))
    text = get_template("cmexam").render(single, exam, RenderOptions(shots=0)).text
    assert text == SINGLE_HEAD + "下列{属于}解表药的有:\nA 麻黄\nB 桂枝\nC 大黄" + SINGLE_TAIL


def test_kaoshis_default_prompt_is_the_alternative(tmp_path: Path) -> None:
    exam = load_exam_result("cmexam", make_cmexam(tmp_path / "CMExam")).exam
    template = get_template("default")
    single = template.render(exam.questions[0], exam, RenderOptions(shots=0)).text
    assert single.startswith("以下是单项选择题") and single.endswith(
        "B. 美托洛尔\nC. 卡托普利\nD. 氢氯噻嗪\nE. 螺内酯\n答案："
    )
    multi = template.render(exam.questions[2], exam, RenderOptions(shots=0)).text
    assert multi.startswith("以下是多项选择题") and "D. 薄荷" in multi


# Replies in the two lines CMExam's prompt asks for ('答案：' then '解释：'), as chat models write them.
SINGLE_Q = Question(
    "s", QuestionType.SINGLE, "下列药物中属于β受体阻滞剂的是",
    (("A", "硝苯地平"), ("B", "美托洛尔"), ("C", "卡托普利"), ("D", "氢氯噻嗪"), ("E", "螺内酯")),
    frozenset("B"),
)  # fmt: skip
MULTI_Q = Question(
    "m", QuestionType.MULTI, "下列属于解表药的有",
    (("A", "麻黄"), ("B", "桂枝"), ("C", "大黄"), ("D", "薄荷"), ("E", "黄连")), frozenset("ABD"),
)  # fmt: skip
REPLIES: list[tuple[Question, str, str | None]] = [
    (SINGLE_Q, "答案：B\n解释：美托洛尔为β1受体阻滞剂，A为钙通道阻滞剂，C为ACEI，D、E为利尿剂。", "B"),
    (SINGLE_Q, "答案：B 美托洛尔\n解释：A、C、D、E均不是β受体阻滞剂。", "B"),
    (SINGLE_Q, "答案：B，美托洛尔。\n解释：选项A硝苯地平是钙拮抗剂。", "B"),
    (SINGLE_Q, "答案：B。解释：美托洛尔是β受体阻滞剂，而A是钙通道阻滞剂。", "B"),
    (SINGLE_Q, "“答案：B”\n“解释：美托洛尔属于β受体阻滞剂，E螺内酯是保钾利尿剂。”", "B"),
    (SINGLE_Q, "答案：B\n\n解释：洛尔类为β受体阻滞剂；地平类（A）为钙通道阻滞剂。", "B"),
    (SINGLE_Q, "**答案：** B\n**解释：** 美托洛尔，C为普利类。", "B"),
    (MULTI_Q, "答案：ABD\n解释：麻黄、桂枝、薄荷为解表药，C大黄为泻下药，E黄连为清热药。", "ABD"),
    (MULTI_Q, "答案：A、B、D\n解释：大黄(C)泻下，黄连(E)清热。", "ABD"),
    (MULTI_Q, "答案：ABD，\n解释：C、E不是解表药。", "ABD"),
    (MULTI_Q, "答案：ABD，解释：麻黄、桂枝、薄荷均能发散表邪，C、E不是。", "ABD"),
    (MULTI_Q, "<think>\n大黄泻下，黄连清热，C和E不选。\n</think>\n答案：ABD\n解释：三者均能解表。", "ABD"),
    (MULTI_Q, "Answer: ABD\nExplanation: C (rhubarb) purges and E (coptis) clears heat.", "ABD"),
    # no letters: never guessed
    (MULTI_Q, "答案：\n解释：无法判断。", None),
]


@pytest.mark.parametrize(("question", "reply", "expected"), REPLIES)
def test_answers_are_read_from_cmexam_replies(question: Question, reply: str, expected: str | None) -> None:
    result = extract_answer(question, reply)
    if expected is None:
        assert (result.status, result.answer) == ("unparsed", None), result
    else:
        assert (result.status, result.answer) == ("ok", frozenset(expected)), result


def test_the_leaderboard_has_accuracy_weighted_f1_and_disciplines(tmp_path: Path, store_path: Path) -> None:
    exam = kaoshi.load_exam("cmexam", make_cmexam(tmp_path / "CMExam"))
    for name, model in (("always-b", "constant:B"), ("always-a", "constant:A")):
        kaoshi.evaluate(exam, model, run_name=name, store=store_path)
    loaded = [kaoshi.load_run(name, store=store_path) for name in ("always-b", "always-a")]
    table = leaderboard_table(
        build_board(
            "cmexam",
            [(r.run, list(r.samples), r.grader) for r in loaded],
            leaderboard_layout("cmexam"),
            metrics=benchmark_metrics("cmexam"),
        )
    )
    assert table.headers[6:] == ("accuracy", "weighted F1", "中医学", "临床医学")
    # gold B, C, ABD, A: always-a is right once (A), always-b once (B); F1 by answer string
    rows = {row[0]: row[6:] for row in table.rows}
    assert rows["always-a"] == ["25.0%", "10.0%", "0.0%", "33.3%"]
    assert rows["always-b"] == ["25.0%", "10.0%", "0.0%", "33.3%"]
    assert "Medical Discipline" in table.note


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_end_to_end_with_the_random_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path
) -> None:
    data = make_cmexam(tmp_path / "CMExam") / "data" / "test_with_annotations.csv"
    store = str(store_path)
    run = ["run", "--benchmark", "cmexam", "--data", str(data), "--model", "random", "--run-name", "rnd"]
    cli(capsys, *run, "--store", store)
    report: dict[str, Any] = json.loads(cli(capsys, "report", "rnd", "--format", "json", "--store", store))
    assert (
        report["n"] == 4
        and report["graded"] == 4
        and report["benchmark_metrics"]["weighted F1 (scikit-learn average=weighted)"]["value"] is not None
    )
    assert set(report["groups"]["subject"]) == {"临床医学", "中医学"}
    [board] = json.loads(
        cli(capsys, "leaderboard", "--benchmark", "cmexam", "--format", "json", "--store", store)
    )
    assert board["columns"][6:] == ["accuracy", "weighted F1", "中医学", "临床医学"]
    assert [row[0] for row in board["rows"]] == ["rnd"]
    plot = tmp_path / "plot.png"
    cli(capsys, "plot", "rnd", "--by", "subject", "-o", str(plot), "--store", store)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = tmp_path / "report.html"
    cli(capsys, "html", "rnd", "-o", str(page), "--store", store)
    assert "临床医学" in page.read_text(encoding="utf-8")
