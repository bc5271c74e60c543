"""CFLUE's knowledge part in its published layout (data/knowledge/knowledge.json, a JSON array whose
`choices` are Python dict literals in a string), on records we wrote ourselves."""

from __future__ import annotations

import json
import tempfile
import warnings
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
    get_template,
    leaderboard_layout,
    load_exam_result,
)
from kaoshi.benchmarks.cflue.loader import parse_choices
from kaoshi.cli.main import main
from kaoshi.data import DataError, QuestionType
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Question
from kaoshi.prompts import RenderOptions, answer_candidates
from kaoshi.qtypes import extract_answer
from kaoshi.report.leaderboard import build_board, leaderboard_table
from tests.support.files import QUALBENCH_ORIGINAL, write_qualbench_json

RECORDS: list[dict[str, Any]] = [
    {
        "名称": "证券从业资格",
        "task": "单项选择题",
        "question": "我国股票的发行价格不得低于（ ）。",
        "choices": "{'A': '票面金额', 'B': '每股净资产', 'C': '二级市场价格', 'D': '零'}",
        "answer": "A",
        "analysis": "股票发行不得折价，价格不得低于票面金额。",
    },
    {
        "名称": "基金从业资格",
        "task": "多项选择题",
        "question": "下列属于基金合同当事人的有（ ）。",
        "choices": "{'A': '基金份额持有人', 'B': '基金管理人', 'C': '基金托管人', 'D': '证券交易所'}",
        "answer": "ABC",
        "analysis": "基金合同的当事人为持有人、管理人和托管人。",
    },
    {
        "名称": "银行从业资格",
        "task": "判断题",
        "question": "存款保险制度可以完全消除商业银行的经营风险。",
        "choices": "{'A': '对', 'B': '错'}",
        "answer": "B",
        "analysis": "存款保险只能降低风险，不能消除风险。",
    },
    {
        "名称": "证券从业资格",
        "task": "多项选择题",
        # quotes of both kinds inside the literal, as a Python repr writes them
        "question": "关于“市盈率”，下列说法正确的有（ ）。",
        "choices": "{'A': \"等于股价除以'每股收益'\", 'B': '可用于估值比较', 'C': '越高一定越好'}",
        "answer": "AB",
        "analysis": "",
    },
]


def write_knowledge(root: Path, records: list[Any], *, newline: str = "\n", bom: bool = False) -> Path:
    """A CFLUE repository with data/knowledge/knowledge.json, an indented array as published."""
    path = root / "data" / "knowledge" / "knowledge.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(records, ensure_ascii=False, indent=4).replace("\n", newline)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def test_knowledge_json(tmp_path: Path) -> None:
    path = write_knowledge(tmp_path / "cflue", RECORDS)
    result = load_exam_result("cflue", path)
    exam = result.exam
    assert result.errors == () and exam.metadata["split"] == "test"
    assert [q.id for q in exam.questions] == ["0", "1", "2", "3"]  # the array index
    single, multi, judge, quoted = exam.questions
    assert single.type is QuestionType.SINGLE and single.answer == frozenset("A")
    assert single.options == (("A", "票面金额"), ("B", "每股净资产"), ("C", "二级市场价格"), ("D", "零"))
    assert (single.subject, single.domain) == ("证券从业资格", "单项选择题")
    assert single.explanation == "股票发行不得折价，价格不得低于票面金额。"
    assert multi.type is QuestionType.MULTI and multi.answer == frozenset("ABC")
    # 判断题: a two-option single-choice question answered with a letter
    assert judge.type is QuestionType.SINGLE and judge.options == (("A", "对"), ("B", "错"))
    assert (judge.answer, judge.domain) == (frozenset("B"), "判断题")
    assert quoted.options[0] == ("A", "等于股价除以'每股收益'") and quoted.explanation == ""
    # each record's line is the line of its '{'
    lines = path.read_text(encoding="utf-8").split("\n")
    for question in exam.questions:
        assert question.source is not None and lines[question.source.line - 1].strip() == "{"


def test_the_repository_the_data_folder_and_the_file(tmp_path: Path) -> None:
    root = tmp_path / "cflue"
    path = write_knowledge(root, RECORDS)
    for data in (root, root / "data", path):
        assert detect_benchmark(data) == "cflue"
        assert len(load_exam_result(None, data).exam) == 4
    with pytest.raises(DataError, match="single split"):
        load_exam_result("cflue", root, "val")
    with pytest.raises(DataError, match="give --data PATH"):
        load_exam_result("cflue")
    with pytest.raises(DataError, match=r"no data/knowledge/knowledge\.json here"):
        load_exam_result("cflue", tmp_path)


def test_bom_and_crlf(tmp_path: Path) -> None:
    path = write_knowledge(tmp_path / "cflue", RECORDS, newline="\r\n", bom=True)
    exam = load_exam_result(None, path).exam
    assert exam.metadata["benchmark"] == "cflue" and len(exam) == 4
    assert [q.source.line for q in exam.questions if q.source] == [2, 10, 18, 26]


def test_a_judge_record_without_choices_gets_a_and_b(tmp_path: Path) -> None:
    record = {**RECORDS[2], "choices": ""}
    exam = load_exam_result("cflue", write_knowledge(tmp_path / "c", [record])).exam
    assert exam.questions[0].options == (("A", "对"), ("B", "错"))


@pytest.mark.parametrize(
    ("choices", "options"),
    [
        ("{'A': '对', 'B': '错'}", (("A", "对"), ("B", "错"))),
        ('{"A": "甲", "B": "乙"}', (("A", "甲"), ("B", "乙"))),
        ("{'B': '乙', 'A': '甲'}", (("A", "甲"), ("B", "乙"))),  # in letter order
        ("{'A': 100, 'B': 2.5, 'C': '3万元'}", (("A", "100"), ("B", "2.5"), ("C", "3万元"))),
        ("  {'A': ' 甲 ',\n 'B': '乙'}  ", (("A", "甲"), ("B", "乙"))),
        ({"A": "甲", "B": "乙"}, (("A", "甲"), ("B", "乙"))),  # already a JSON object
    ],
)
def test_choices_literals(choices: object, options: tuple[tuple[str, str], ...]) -> None:
    assert parse_choices(choices) == options


REFUSED = [
    (
        "__import__('os').system('x')",
        "expected a dict literal such as {'A': '…', 'B': '…'}, got a Call expression",
    ),
    ("{'A': __import__('os').system('x'), 'B': '乙'}", "the dict holds something other than literals"),
    ("{'A': open('/etc/passwd').read(), 'B': '乙'}", "the dict holds something other than literals"),
    ("(lambda: 1)()", "got a Call expression"),
    ("['甲', '乙']", "got a List expression"),
    ("{'A', 'B'}", "got a Set expression"),
    ("{'A': '甲', 'B': '乙'", "not a Python dict literal"),
    ("A：甲 B：乙", "not a Python dict literal"),
    ("(" * 300 + ")" * 300, "not a Python dict literal"),
    ("{'A': '甲', 'A': '乙'}", "the dict literal repeats a key"),
    ("{'a': '甲', 'b': '乙'}", "key 'a' is not an option letter A-Z"),
    ("{1: '甲', 2: '乙'}", "key 1 is not an option letter A-Z"),
    ("{'AB': '甲', 'C': '乙'}", "key 'AB' is not an option letter A-Z"),
    ("{'A': '甲', 'C': '丙'}", "options AC: expected letters A, B, … without gaps"),
    ("{'A': '甲'}", "options A: expected letters A, B, … without gaps"),
    ("{}", "options (none): expected letters A, B, … without gaps"),
    ("{'A': '甲', 'B': ''}", "option B is empty"),
    ("{'A': '甲', 'B': ['乙']}", "option B is list, not text"),
    ("{'A': '甲', 'B': True}", "option B is bool, not text"),
    ("{'A': '甲', 'B': None}", "option B is NoneType, not text"),
    (42, "expected a dict literal such as {'A': '…', 'B': '…'}, got int"),
]


@pytest.mark.parametrize(("choices", "reason"), REFUSED)
def test_anything_but_a_dict_of_letters_is_refused(choices: object, reason: str) -> None:
    with pytest.raises(FieldError) as info:
        parse_choices(choices)
    assert info.value.field == "choices" and reason in info.value.reason


def test_a_malicious_choices_string_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    attack = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    inside = f"{{'A': __import__('pathlib').Path({str(marker)!r}).touch(), 'B': '乙'}}"
    records = [{**RECORDS[0], "choices": attack}, {**RECORDS[0], "choices": inside}, RECORDS[1]]
    path = write_knowledge(tmp_path / "cflue", records)
    result = load_exam_result("cflue", path, on_invalid="skip")
    assert not marker.exists()
    assert [q.id for q in result.exam.questions] == ["2"]
    assert [(e.line, e.field) for e in result.errors] == [(2, "choices"), (10, "choices")]


BAD_RECORDS = [
    (
        {**RECORDS[0], "task": "填空题"},
        "field 'task': unknown task '填空题' (CFLUE has 单项选择题, 多项选择题, 判断题)",
    ),
    ({k: v for k, v in RECORDS[0].items() if k != "task"}, "field 'task': missing required field"),
    ({**RECORDS[0], "question": ""}, "field 'question': is empty"),
    ({**RECORDS[0], "choices": None}, "field 'choices': missing required field"),
    ({**RECORDS[0], "answer": "AB"}, "field 'answer': single-choice answer must be one letter, got 'AB'"),
    ({**RECORDS[0], "answer": "E"}, "field 'answer': answer 'E' names E, not among the options ABCD"),
    ({**RECORDS[1], "answer": "ABE"}, "field 'answer': answer 'ABE' names E, not among the options ABCD"),
    (
        {**RECORDS[2], "answer": "对"},
        "field 'answer': answer '对' is not option letters (bad character '对')",
    ),
    ({**RECORDS[0], "answer": ""}, "field 'answer': missing required field"),
    ({**RECORDS[0], "answer": 1}, "field 'answer': expected option letters, got int 1"),
    ({**RECORDS[0], "名称": ["证券"]}, "field '名称': expected text, got list ['证券']"),
    (
        {**RECORDS[0], "choices": "{'A': '甲'}"},
        "field 'choices': options A: expected letters A, B, … without gaps",
    ),
    (["not", "an", "object"], "expected a JSON object, got list"),
]


@pytest.mark.parametrize(("record", "message"), BAD_RECORDS)
def test_bad_records_name_file_line_and_field(tmp_path: Path, record: object, message: str) -> None:
    path = write_knowledge(tmp_path / "cflue", [RECORDS[0], record, RECORDS[2]])
    with pytest.raises(DataError) as info:
        load_exam_result("cflue", path)
    line = 10  # the second record's '{' in the indented array
    assert [str(e) for e in info.value.errors] == [f"{path}:{line}: {message}"]
    # skipped, the others keep their array index as id
    assert [q.id for q in load_exam_result("cflue", path, on_invalid="skip").exam.questions] == ["0", "2"]


def test_broken_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "knowledge.json"
    path.write_text('[\n  {"名称": "x", "task": "判断题"},\n  {"task" "判断题"}\n]', encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_exam_result("cflue", path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3: invalid JSON: Expecting ':' delimiter (column 11)"
    ]


def test_detection_leaves_qualbench_and_other_files_alone(tmp_path: Path) -> None:
    assert (
        detect_benchmark(write_qualbench_json(tmp_path / "QualBench.json", QUALBENCH_ORIGINAL)) == "qualbench"
    )
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    assert detect_benchmark(empty) == "qualbench"
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"question": "q", "answer": "A"}]), encoding="utf-8")
    assert detect_benchmark(other) == "qualbench"
    broken = tmp_path / "broken.json"
    broken.write_text('[{"名称": ', encoding="utf-8")
    assert detect_benchmark(broken) == "qualbench"
    # a CFLUE file under another name is still CFLUE's
    renamed = tmp_path / "subset.json"
    renamed.write_text(json.dumps(RECORDS[:1], ensure_ascii=False), encoding="utf-8")
    assert detect_benchmark(renamed) == "cflue"


@given(st.text(alphabet="{}[]()':,AB甲乙 _.\\\"0", max_size=40))
def test_any_choices_string_parses_or_is_refused_clearly(text: str) -> None:
    try:
        options = parse_choices(text)
    except FieldError as exc:
        assert exc.field == "choices" and exc.reason
        return
    assert [letter for letter, _ in options] == [chr(ord("A") + i) for i in range(len(options))]


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.text(alphabet="{}':,AB对错甲单项选择题判断题 ", max_size=24),
)
fields = st.sampled_from(["名称", "task", "question", "choices", "answer", "analysis"])
records = st.lists(
    st.one_of(
        st.dictionaries(
            fields, scalars | st.sampled_from(["单项选择题", "判断题", "{'A': '对', 'B': '错'}"])
        ),
        scalars,
    ),
    max_size=5,
)


@settings(max_examples=100, deadline=None)
@given(records)
def test_any_records_load_or_are_reported_with_file_and_line(rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_knowledge(Path(folder), rows)
        try:
            result = load_exam_result("cflue", path, on_invalid="skip")
        except DataError as exc:
            assert str(path) in str(exc)
            return
        assert all(e.file == str(path) and e.line is not None and e.reason for e in result.errors)


# -- the prompt ----------------------------------------------------------------------------------------
def exam_of(tmp_path: Path) -> kaoshi.Exam:
    return load_exam_result("cflue", write_knowledge(tmp_path / "cflue", RECORDS)).exam


# CFLUE's own texts (aliyun/cflue utils/format_example.py), written out here by hand.
SINGLE_HEAD = (
    "假设你是一位金融行业专家，请回答下列问题。\n"
    "注意：题目是单选题，只需要返回一个最合适的选项，若有多个合适的答案，只返回最准确的即可。\n"
    "注意：结果只输出两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解析，"
    "输出格式限制为：“答案：”，“解析：”。\n\n"
)
MULTI_HEAD = (
    "假设你是一位金融行业专家，请回答下列问题。\n"
    "注意：题目是多选题，可能存在多个正确的答案。\n"
    "注意：结果只输出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。输出格式限制为：“答案：”，“解析：”。\n\n"
)


def test_the_cflue_prompt_is_cflues_own(tmp_path: Path) -> None:
    assert default_template_name("cflue") == "cflue"
    exam = exam_of(tmp_path)
    template = get_template("cflue")
    assert (template.version, template.default_shots) == (2, 0)
    single, multi, judge, quoted = (template.render(q, exam, RenderOptions(shots=0)) for q in exam.questions)
    assert single.text == (
        "假设你是一位金融行业专家，请回答下列问题。\n"
        "注意：题目是单选题，只需要返回一个最合适的选项，若有多个合适的答案，只返回最准确的即可。\n"
        "注意：结果只输出两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解析，"
        "输出格式限制为：“答案：”，“解析：”。\n"
        "\n"
        "我国股票的发行价格不得低于（ ）。\n"
        "A. 票面金额\n"
        "B. 每股净资产\n"
        "C. 二级市场价格\n"
        "D. 零"
    )
    assert multi.text == (
        "假设你是一位金融行业专家，请回答下列问题。\n"
        "注意：题目是多选题，可能存在多个正确的答案。\n"
        "注意：结果只输出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。输出格式限制为：“答案：”，“解析：”。\n"
        "\n"
        "下列属于基金合同当事人的有（ ）。\n"
        "A. 基金份额持有人\n"
        "B. 基金管理人\n"
        "C. 基金托管人\n"
        "D. 证券交易所"
    )
    # a 判断题 gets the single-choice text, as CFLUE's code sends every task but 多项选择题
    assert judge.text == SINGLE_HEAD + "存款保险制度可以完全消除商业银行的经营风险。\nA. 对\nB. 错"
    assert quoted.text == (
        MULTI_HEAD
        + "关于“市盈率”，下列说法正确的有（ ）。\n"
        + "A. 等于股价除以'每股收益'\nB. 可用于估值比较\nC. 越高一定越好"
    )
    assert all(p.shots == 0 and p.messages is None for p in (single, multi, judge, quoted))


def test_the_cflue_prompt_in_chat_is_one_user_message(tmp_path: Path) -> None:
    exam = exam_of(tmp_path)
    template = get_template("cflue")
    chat = template.render(exam.questions[1], exam, RenderOptions(shots=0, chat=True))
    assert chat.messages == (
        (
            "user",
            "假设你是一位金融行业专家，请回答下列问题。\n"
            "注意：题目是多选题，可能存在多个正确的答案。\n"
            "注意：结果只输出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。输出格式限制为：“答案：”，“解析：”。\n"
            "\n"
            "下列属于基金合同当事人的有（ ）。\n"
            "A. 基金份额持有人\n"
            "B. 基金管理人\n"
            "C. 基金托管人\n"
            "D. 证券交易所",
        ),
    )
    assert chat.payload() == {"messages": [{"role": "user", "content": chat.messages[0][1]}]}
    # --system is kaoshi's: a system message in chat, the first line in completion
    system = RenderOptions(shots=0, chat=True, system="你是一个金融助手。")
    with_system = template.render(exam.questions[2], exam, system)
    assert with_system.messages == (
        ("system", "你是一个金融助手。"),
        ("user", SINGLE_HEAD + "存款保险制度可以完全消除商业银行的经营风险。\nA. 对\nB. 错"),
    )
    completion = template.render(exam.questions[2], exam, RenderOptions(shots=0, system="你是一个金融助手。"))
    assert (
        completion.text
        == "你是一个金融助手。\n" + SINGLE_HEAD + "存款保险制度可以完全消除商业银行的经营风险。\nA. 对\nB. 错"
    )


def test_the_cflue_prompt_is_zero_shot(tmp_path: Path) -> None:
    exam = exam_of(tmp_path)
    template = get_template("cflue")
    for chat in (False, True):
        asked = template.render(exam.questions[3], exam, RenderOptions(shots=3, chat=chat))
        plain = template.render(exam.questions[3], exam, RenderOptions(shots=0, chat=chat))
        assert asked == plain and asked.shots == 0


def test_the_cflue_prompt_uses_the_record_as_written(tmp_path: Path) -> None:
    # eval(choices).items(): the literal's order, its numbers as Python prints them, text unstripped;
    # the question as read
    record = {
        **RECORDS[0],
        "question": " 下列金额中{最大}的是（ ）。\n",
        "choices": "{'B': ' 1万元 ', 'A': 100, 'C': 2.5}",
        "answer": "B",
    }
    exam = load_exam_result("cflue", write_knowledge(tmp_path / "c", [record])).exam
    [question] = exam.questions
    assert question.options == (("A", "100"), ("B", "1万元"), ("C", "2.5"))  # kaoshi's own view
    text = get_template("cflue").render(question, exam, RenderOptions(shots=0)).text
    assert text == SINGLE_HEAD + " 下列金额中{最大}的是（ ）。\n\nB.  1万元 \nA. 100\nC. 2.5"
    # without the record (options shuffled, another benchmark's question): kaoshi's stem and options
    bare = replace(question, verbatim=())
    text = get_template("cflue").render(bare, exam, RenderOptions(shots=0)).text
    assert text == SINGLE_HEAD + "下列金额中{最大}的是（ ）。\nA. 100\nB. 1万元\nC. 2.5"
    # a 判断题 without choices (CFLUE's code could not load it) shows kaoshi's A 对 / B 错
    judge = load_exam_result("cflue", write_knowledge(tmp_path / "j", [{**RECORDS[2], "choices": ""}])).exam
    text = get_template("cflue").render(judge.questions[0], judge, RenderOptions(shots=0)).text
    assert text == SINGLE_HEAD + "存款保险制度可以完全消除商业银行的经营风险。\nA. 对\nB. 错"


def test_cflue_kaoshi_asks_for_answer_and_analysis_lines(tmp_path: Path) -> None:
    exam = exam_of(tmp_path)
    template = get_template("cflue-kaoshi")
    multi = template.render(exam.questions[1], exam, RenderOptions(shots=0)).text
    assert multi == (
        "以下是“基金从业资格”考试的多项选择题，请选出所有正确的选项。请按以下格式作答，先给出答案，再给出解析：\n"
        "答案：所有正确选项的字母\n解析：简要说明理由\n\n"
        "下列属于基金合同当事人的有（ ）。\nA. 基金份额持有人\nB. 基金管理人\nC. 基金托管人\n"
        "D. 证券交易所\n答案："
    )
    judge = template.render(exam.questions[2], exam, RenderOptions(shots=0)).text
    assert "的判断题，请判断题目中的说法是否正确，A 表示对，B 表示错。" in judge
    assert judge.endswith("存款保险制度可以完全消除商业银行的经营风险。\nA. 对\nB. 错\n答案：")
    for name in ("cflue", "cflue-kaoshi"):
        assert (
            get_template(name).answer_end(chat=False)
            == get_template(name).answer_end(chat=True)
            == "\n解析："
        )


def test_cflue_kaoshi_exemplars_are_of_the_same_task_and_reply_in_two_lines(tmp_path: Path) -> None:
    exam = exam_of(tmp_path)
    template = get_template("cflue-kaoshi")
    # question 3 (多项选择题) takes question 1, the other 多项选择题; never the 判断题 or itself
    prompt = template.render(exam.questions[3], exam, RenderOptions(shots=2))
    assert prompt.shots == 1
    assert "答案：ABC\n解析：基金合同的当事人为持有人、管理人和托管人。\n\n关于“市盈率”" in prompt.text
    chat = template.render(exam.questions[3], exam, RenderOptions(shots=1, chat=True))
    assert chat.messages is not None
    roles = [role for role, _ in chat.messages]
    assert roles == ["system", "user", "assistant", "user"]
    assert chat.messages[2][1] == "答案：ABC\n解析：基金合同的当事人为持有人、管理人和托管人。"
    assert chat.messages[0][1].startswith("以下是“证券从业资格”考试的多项选择题")
    # the only 判断题 has no exemplar of its task: none, rather than a 单项选择题
    assert template.render(exam.questions[2], exam, RenderOptions(shots=1)).shots == 0


def test_log_likelihood_ranks_letters(tmp_path: Path) -> None:
    exam = exam_of(tmp_path)
    assert answer_candidates(exam.questions[2]) == ("A", "B")  # 判断题
    assert len(answer_candidates(exam.questions[1])) == 15  # every letter set of A-D


# -- reading the answer from a reply in CFLUE's shape ------------------------------------------------------
SINGLE_Q = Question(
    "s", QuestionType.SINGLE, "股票的发行价格不得低于（ ）。",
    (("A", "票面金额"), ("B", "每股净资产"), ("C", "二级市场价格"), ("D", "零")), frozenset("A"),
)  # fmt: skip
MULTI_Q = Question(
    "m", QuestionType.MULTI, "下列属于基金合同当事人的有（ ）。",
    (("A", "基金份额持有人"), ("B", "基金管理人"), ("C", "基金托管人"), ("D", "交易所"), ("E", "证监会")),
    frozenset("ABC"),
)  # fmt: skip
JUDGE_Q = Question(
    "j", QuestionType.SINGLE, "存款保险可以完全消除风险。", (("A", "对"), ("B", "错")), frozenset("B")
)
UNREAD = None
REPLIES: list[tuple[Question, str, str | None]] = [
    # chat models: the answer line, then an analysis that names the other options
    (MULTI_Q, "答案：AC\n解析：A项和C项正确；B项错误，D项错误。", "AC"),
    (MULTI_Q, "答案：ABC\n解析：当事人为持有人、管理人和托管人，D选项不是当事人，E选项是监管机构。", "ABC"),
    (MULTI_Q, "答案：A、B、C\n解析：选项D、E均不是基金合同的当事人，故排除。", "ABC"),
    (MULTI_Q, "答案：ABC。\n\n解析：D错误，E错误。", "ABC"),
    (MULTI_Q, "**答案：** ABC\n**解析：** 三方当事人，D、E不是。", "ABC"),
    (MULTI_Q, "答案：ABC\n解析：选项E中国证监会正确吗？不，它是监管者。", "ABC"),
    (SINGLE_Q, "答案：A\n解析：我国股票不得折价发行，B、C、D均错误。", "A"),
    (SINGLE_Q, "答案：A. 票面金额\n解析：发行价格可以等于或高于票面金额，但不得低于它，选项D说法错误。", "A"),
    (JUDGE_Q, "答案：B\n解析：存款保险只能降低风险，题干中“完全消除”的说法错误，A不对。", "B"),
    (JUDGE_Q, "答案：B（错）\n解析：存款保险只能降低风险。", "B"),
    # replies to CFLUE's own prompt: its quotes copied (输出格式限制为：“答案：”，“解析：”), both lines
    # on one, a word or the option after the letter, an analysis naming the letters left out
    (SINGLE_Q, "“答案：A”\n“解析：股票不得折价发行，B、C、D均不是下限。”", "A"),
    (SINGLE_Q, "答案：“A”\n解析：“不得低于票面金额，D说法错误。”", "A"),
    (SINGLE_Q, "答案：A，解析：我国股票不得折价发行，故B、C、D错误。", "A"),
    (SINGLE_Q, "答案：A\n\n解析：不得折价发行，选项C为二级市场价格，与发行价格下限无关。", "A"),
    (SINGLE_Q, "答案：选项A\n解析：B项错误。", "A"),
    (MULTI_Q, "“答案：ABC”，“解析：D交易所和E证监会都不是基金合同的当事人。”", "ABC"),
    (MULTI_Q, "答案：ABC，解析：D、E不是基金合同当事人。", "ABC"),
    (MULTI_Q, "答案：A,B,C\n解析：D不是当事人，E是监管机构。", "ABC"),
    (JUDGE_Q, "答案：B. 错\n解析：存款保险只能降低风险，不能完全消除，A说法不对。", "B"),
    (JUDGE_Q, "答案：错（B）\n解析：不能完全消除。", "B"),
    # a completion prompt ends with '答案：': the model writes the letters, then the analysis line
    (MULTI_Q, "AC\n解析：A项和C项正确；B项错误。", "AC"),
    (SINGLE_Q, "A\n解析：不得折价发行。\n\n以下是“证券从业资格”考试的单项选择题", "A"),
    # reasoning models
    (MULTI_Q, "<think>\n持有人、管理人、托管人。D不是，E是监管者。</think>\n答案：ABC\n解析：三方。", "ABC"),
    (SINGLE_Q, "<think>折价发行被禁止，所以是A，不是B。</think>\n\n答案：A\n解析：不得折价发行。", "A"),
    (JUDGE_Q, "<think>说法太绝对了，应该选错，也就是B。</think>\n答案：B\n解析：不能完全消除。", "B"),
    # English
    (MULTI_Q, "Answer: ABC\nExplanation: holders (A), manager (B), custodian (C); D and E are not.", "ABC"),
    (SINGLE_Q, "Answer: A\nExplanation: Shares may not be issued below par, so B, C and D are wrong.", "A"),
    (JUDGE_Q, "Answer: B\nExplanation: Deposit insurance cannot eliminate risk, so A is wrong.", "B"),
    # what is not a letter answer is never guessed: a 判断题 answered 错 in words, no answer at all
    (JUDGE_Q, "答案：错\n解析：存款保险只能降低风险。", UNREAD),
    # an answer line in words: the letter its analysis names is what the analysis discusses, not the answer
    (JUDGE_Q, "答案：错误\n解析：选项A的说法过于绝对，存款保险只能降低风险。", UNREAD),
    (JUDGE_Q, "答案：正确\n解析：B项的理解有误。", UNREAD),
    (SINGLE_Q, "答案：不得低于面值\n解析：选项D显然不对。", UNREAD),
    (MULTI_Q, "答案：\n解析：无法判断。", UNREAD),
]  # fmt: skip


# Finance exams combine statements numbered with Roman numerals (Ⅰ, Ⅱ, …) into options. NFKC would turn Ⅰ
# into the letter I and Ⅳ into IV: they are no option letters.
ROMAN_Q = Question(
    "r", QuestionType.SINGLE, "下列说法正确的有（ ）。\nⅠ.甲\nⅡ.乙\nⅢ.丙\nⅣ.丁",
    (("A", "Ⅰ、Ⅱ"), ("B", "Ⅰ、Ⅲ"), ("C", "Ⅱ、Ⅳ"), ("D", "Ⅰ、Ⅱ、Ⅲ")), frozenset("D"),
)  # fmt: skip
ROMAN_MULTI_Q = Question(
    "rm", QuestionType.MULTI, "下列属于……的有（ ）。",
    (("A", "Ⅰ"), ("B", "Ⅱ"), ("C", "Ⅲ"), ("D", "Ⅳ")), frozenset("ABD"),
)  # fmt: skip
REPLIES += [
    (ROMAN_Q, "答案：D（Ⅰ、Ⅱ、Ⅲ）\n解析：Ⅳ的说法错误。", "D"),
    (ROMAN_Q, "答案：D. Ⅰ、Ⅱ、Ⅲ\n解析：Ⅳ错误。", "D"),
    (ROMAN_Q, "Ⅰ、Ⅱ、Ⅲ", "D"),
    (ROMAN_Q, "答案：Ⅰ、Ⅱ、Ⅲ\n解析：Ⅳ错误。", "D"),
    (ROMAN_Q, "Ⅰ、Ⅱ、Ⅲ三项正确，Ⅳ错误，答案是D。", "D"),
    (ROMAN_MULTI_Q, "答案：ABD（Ⅰ、Ⅱ、Ⅳ）\n解析：Ⅲ不属于。", "ABD"),
    (ROMAN_MULTI_Q, "答案：Ⅰ、Ⅱ、Ⅳ\n解析：Ⅲ不属于。", UNREAD),
]
# Option texts that start with a capital (a company, a department, a money supply, a typed I for Ⅰ),
# repeated in brackets after the letter: the bracket holds the option's text, not more letters.
LETTERED_Q = Question(
    "l", QuestionType.SINGLE, "下列说法正确的是（ ）。",
    (("A", "B公司应确认收入"), ("B", "K部门的利润为8万元"), ("C", "I、Ⅱ、Ⅲ"), ("D", "M0")),
    frozenset("B"),
)  # fmt: skip
LETTERED_MULTI_Q = Question(
    "lm", QuestionType.MULTI, "下列说法正确的有（ ）。",
    (("A", "A公司"), ("B", "B公司"), ("C", "K线形态"), ("D", "ATM机具布放")), frozenset("AC"),
)  # fmt: skip
REPLIES += [
    (LETTERED_Q, "答案：A（B公司应确认收入）\n解析：C、D错误。", "A"),
    (LETTERED_Q, "答案：B（K部门的利润为8万元）\n解析：其余错误。", "B"),
    (LETTERED_Q, "答案：C（I、Ⅱ、Ⅲ）\n解析：Ⅳ错误。", "C"),
    (LETTERED_Q, "答案：D（M0）\n解析：流通中的现金。", "D"),
    (LETTERED_Q, "答案：B (K部门)", "B"),
    (LETTERED_MULTI_Q, "答案：AC（A公司、K线形态）\n解析：B、D错误。", "AC"),
    (LETTERED_MULTI_Q, "答案：A、C（K线形态）", "AC"),
    (LETTERED_MULTI_Q, "答案：(A)(C)\n解析：B、D错误。", "AC"),
    (LETTERED_MULTI_Q, "答案：A、(C)", "AC"),
]


@pytest.mark.parametrize(("question", "reply", "expected"), REPLIES)
def test_answers_are_read_from_cflue_replies(question: Question, reply: str, expected: str | None) -> None:
    result = extract_answer(question, reply)
    if expected is None:
        assert (result.status, result.answer) == ("unparsed", None), result
    else:
        assert (result.status, result.answer) == ("ok", frozenset(expected)), result


# -- leaderboard and the command line ------------------------------------------------------------------
def test_the_leaderboard_has_a_column_per_task(tmp_path: Path, store_path: Path) -> None:
    exam = exam_of(tmp_path)
    for name, model in (("always-a", "constant:A"), ("always-b", "constant:B")):
        kaoshi.evaluate(exam, model, run_name=name, store=store_path)
    loaded = [kaoshi.load_run(name, store=store_path) for name in ("always-a", "always-b")]
    table = leaderboard_table(
        build_board(
            "cflue",
            [(r.run, list(r.samples), r.grader) for r in loaded],
            leaderboard_layout("cflue"),
            metrics=benchmark_metrics("cflue"),
        )
    )
    assert table.headers[6:] == ("单项选择题", "多项选择题", "判断题", "accuracy")
    rows = {row[0]: row[6:] for row in table.rows}
    assert rows["always-a"] == ["100.0%", "0.0%", "0.0%", "25.0%"]
    assert rows["always-b"] == ["0.0%", "0.0%", "100.0%", "25.0%"]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_end_to_end_with_the_random_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path
) -> None:
    data = write_knowledge(tmp_path / "cflue", RECORDS)
    store = str(store_path)
    run = ["run", "--benchmark", "cflue", "--data", str(data), "--model", "random", "--run-name", "rnd"]
    cli(capsys, *run, "--store", store)
    report: dict[str, Any] = json.loads(cli(capsys, "report", "rnd", "--format", "json", "--store", store))
    assert report["n"] == 4 and report["graded"] == 4
    assert set(report["groups"]["domain"]) == {"单项选择题", "多项选择题", "判断题"}
    [board] = json.loads(
        cli(capsys, "leaderboard", "--benchmark", "cflue", "--format", "json", "--store", store)
    )
    assert board["columns"][6:] == ["单项选择题", "多项选择题", "判断题", "accuracy"]
    assert [row[3] for row in board["rows"]] == ["cflue 0-shot · no chat"]
    plot = tmp_path / "plot.png"
    cli(capsys, "plot", "rnd", "--by", "domain", "-o", str(plot), "--store", store)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = tmp_path / "report.html"
    cli(capsys, "html", "rnd", "-o", str(page), "--store", store)
    assert "多项选择题" in page.read_text(encoding="utf-8")


def test_an_unknown_escape_in_an_option_is_kept_as_written_without_a_warning() -> None:
    """'\\B' in a choice's text is kept as Python (and the official code's eval) reads it: the backslash as
    written, and no warning to the user."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_choices("{'A': '5\\B', 'B': '6'}") == (("A", "5\\B"), ("B", "6"))
