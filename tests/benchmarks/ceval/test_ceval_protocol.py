"""C-Eval prompts byte for byte as the official code sends them (reference/FORMATS.md, "What the official
C-Eval code sends"): the expected strings are built here from those rules and the raw CSV cells, never
from kaoshi's own helpers."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.data import Exam
from kaoshi.data.shuffle import shuffle_question
from kaoshi.prompts import Prompt, RenderOptions
from kaoshi.store import Store, StoreError
from tests.support.runs import exam_spec

COLUMNS = ["id", "question", "A", "B", "C", "D", "answer", "explanation"]
SUBJECT = "computer_network"
HEADER = "以下是中国关于计算机网络考试的单项选择题，请选出其中的正确答案。"
PERSONA = "你是一个中文人工智能助手，"

# Six dev rows, so five shots leave the last one out; leading and trailing spaces in some cells (and a
# line break inside one) prove the cells are used exactly as read.
DEV_ROWS = [
    [
        "0",
        " 以太网使用的介质访问控制方法是____ ",
        "CSMA/CD ",
        " 令牌环",
        "令牌总线",
        "ALOHA",
        "A",
        " 1. 以太网采用载波监听多路访问。\n2. 冲突时退避重发。 ",
    ],
    ["1", "IP地址192.168.1.1属于____类地址", "A", "B", " C ", "D", "C", "1. 首字节192在192到223之间。"],
    [
        "2",
        "TCP的三次握手中，第二次握手发送____",
        "SYN",
        "SYN+ACK",
        "ACK",
        "FIN",
        "B",
        "1. 服务器回应SYN+ACK。",
    ],
    ["3", "HTTP默认端口是____  ", "21", "25", "53", "80", "D", "1. 万维网服务使用80端口。"],
    ["4", "DNS主要使用的传输层协议是____", "UDP", "TCP", "ICMP", "ARP", "A", "1. 查询通常走UDP。"],
    ["5", "第六道例题____", "甲", "乙", "丙", "丁", "B", "1. 不应出现在五样例提示中。"],
]
VAL_ROWS = [
    ["0", "  路由器工作在OSI模型的____\n（单选）", " 物理层", "数据链路层 ", "网络层", "传输层", "C", ""],
]
OTHER_DEV_ROWS = [["0", "法学例题____", "一", "二", "三", "四", "A", "1. 另一科目。"]]


def write_csv(path: Path, rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


@pytest.fixture
def exam(tmp_path: Path) -> Exam:
    root = tmp_path / "ceval-exam"
    write_csv(root / "dev" / f"{SUBJECT}_dev.csv", DEV_ROWS)
    write_csv(root / "dev" / "law_dev.csv", OTHER_DEV_ROWS)
    write_csv(root / "val" / f"{SUBJECT}_val.csv", VAL_ROWS)
    return load_exam_result("ceval", root, "val").exam


# -- the official rules, written out from FORMATS.md -----------------------------------------------------
def body(row: list[str]) -> str:
    question, a, b, c, d = row[1:6]
    return question + "\nA. " + a + "\nB. " + b + "\nC. " + c + "\nD. " + d


def answer(row: list[str]) -> str:
    return row[6]


def explanation(row: list[str]) -> str:
    return row[7]


def official_completion(cot: bool, k: int) -> str:
    text = HEADER + "\n\n"
    for row in DEV_ROWS[:k]:
        if cot:
            text += (
                body(row)
                + "\n答案：让我们一步一步思考，\n"
                + explanation(row)
                + "\n所以答案是"
                + answer(row)
                + "。\n\n"
            )
        else:
            text += body(row) + "\n答案：" + answer(row) + "\n\n"
    if cot:
        return text + body(VAL_ROWS[0]) + "\n答案：让我们一步一步思考，\n1."
    return text + body(VAL_ROWS[0]) + "\n答案："


def official_chat(cot: bool, k: int) -> list[tuple[str, str]]:
    messages = [("system", PERSONA + HEADER)]
    for row in DEV_ROWS[:k]:
        messages.append(("user", body(row) + "\n答案："))
        if cot:
            solution = "让我们一步一步思考，\n" + explanation(row) + "\n所以答案是" + answer(row) + "。"
            messages.append(("assistant", solution))
        else:
            messages.append(("assistant", answer(row)))
    messages.append(("user", body(VAL_ROWS[0]) + "\n答案："))
    role, first_user = messages[1]
    messages[1] = (role, HEADER + "\n\n" + first_user)
    return messages


def render(exam: Exam, name: str, shots: int, chat: bool, system: str | None = None) -> Prompt:
    [question] = exam.questions
    return get_template(name).render(question, exam, RenderOptions(shots, chat, system))


# -- kaoshi against the rules ----------------------------------------------------------------------------
@pytest.mark.parametrize("shots", [0, 5])
@pytest.mark.parametrize(("name", "cot"), [("ceval-answer-only", False), ("ceval-cot", True)])
def test_completion_prompt_is_the_official_one(exam: Exam, name: str, cot: bool, shots: int) -> None:
    prompt = render(exam, name, shots, chat=False)
    assert prompt.messages is None and prompt.shots == shots
    assert prompt.text == official_completion(cot, shots)


@pytest.mark.parametrize("shots", [0, 5])
@pytest.mark.parametrize(("name", "cot"), [("ceval-answer-only", False), ("ceval-cot", True)])
def test_chat_prompt_is_the_official_one(exam: Exam, name: str, cot: bool, shots: int) -> None:
    prompt = render(exam, name, shots, chat=True)
    assert prompt.messages is not None and prompt.shots == shots
    assert list(prompt.messages) == official_chat(cot, shots)


@pytest.mark.parametrize("name", ["ceval-answer-only", "ceval-cot"])
def test_zero_shot_chat_is_the_system_message_and_one_user_message(exam: Exam, name: str) -> None:
    prompt = render(exam, name, 0, chat=True)
    assert prompt.messages == (
        ("system", PERSONA + HEADER),
        ("user", HEADER + "\n\n" + body(VAL_ROWS[0]) + "\n答案："),
    )


def test_the_default_is_five_shots_in_file_order_of_the_same_subject(exam: Exam) -> None:
    template = get_template("ceval-answer-only")
    assert template.default_shots == 5
    text = render(exam, "ceval-answer-only", template.default_shots, chat=False).text
    assert text == official_completion(cot=False, k=5)
    assert "第六道例题" not in text and "法学例题" not in text


def test_cells_are_raw_not_stripped(exam: Exam) -> None:
    text = render(exam, "ceval-cot", 1, chat=False).text
    assert text.startswith(HEADER + "\n\n 以太网使用的介质访问控制方法是____ \nA. CSMA/CD \nB.  令牌环\n")
    assert "思考，\n 1. 以太网采用载波监听多路访问。\n2. 冲突时退避重发。 \n所以答案是A。\n\n" in text
    assert "  路由器工作在OSI模型的____\n（单选）\nA.  物理层\nB. 数据链路层 \nC. 网络层" in text


def test_a_shuffled_question_falls_back_to_its_parsed_fields(exam: Exam) -> None:
    [question] = exam.questions
    shuffled = shuffle_question(question, seed=3)
    assert shuffled.options != question.options  # this seed moves the options
    prompt = get_template("ceval-answer-only").render(shuffled, exam, RenderOptions(0))
    options = "".join(f"\n{letter}. {text}" for letter, text in shuffled.options)
    assert prompt.text == HEADER + "\n\n路由器工作在OSI模型的____\n（单选）" + options + "\n答案："


def test_user_system_prompt_goes_first(exam: Exam) -> None:
    # Completion: a first line before the header. Chat: before the official system message.
    completion = render(exam, "ceval-answer-only", 5, chat=False, system="请认真作答。")
    assert completion.text == "请认真作答。\n" + official_completion(cot=False, k=5)
    chat = render(exam, "ceval-cot", 5, chat=True, system="请认真作答。")
    expected = official_chat(cot=True, k=5)
    expected[0] = ("system", "请认真作答。\n" + PERSONA + HEADER)
    assert list(chat.messages or ()) == expected


@pytest.mark.parametrize("name", ["ceval-answer-only", "ceval-cot"])
def test_resuming_a_run_made_with_the_old_prompt_is_refused(tmp_path: Path, exam: Exam, name: str) -> None:
    template = get_template(name)
    assert template.version == 2
    spec = exam_spec(
        exam,
        model="constant:A",
        method="generate",
        benchmark="ceval",
        split="val",
        prompt=name,
        shots=5,
        max_new_tokens=8,
    )
    with Store(tmp_path / "s.sqlite") as store:
        store.open_run("r", spec)
        now = replace(spec, prompt_version=template.version)
        with pytest.raises(StoreError, match="prompt_version: stored 1, now 2"):
            store.open_run("r", now)
