"""Prompts compared byte for byte with strings written from the official templates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.benchmarks import get_template
from kaoshi.cli.main import main
from kaoshi.data import DataError, Exam, Question, QuestionType
from kaoshi.prompts import Prompt, RenderOptions, render_fitting

DEV = tuple(
    Question(
        f"computer_network/{i}",
        QuestionType.SINGLE,
        f"例题{i}____",
        (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁")),
        frozenset("ABCD"[i]),
        explanation=f"1. 第{i}步\n2. 推出结论",
        subject="computer_network",
        split="dev",
    )
    for i in range(3)
)
OTHER_SUBJECT_DEV = Question(
    "law/0",
    QuestionType.SINGLE,
    "法律题",
    (("A", "1"), ("B", "2"), ("C", "3"), ("D", "4")),
    frozenset("A"),
    subject="law",
    split="dev",
)
TEST_Q = Question(
    "computer_network/9",
    QuestionType.SINGLE,
    "使用位填充方法，求问传送时要添加几个0____",
    (("A", "1"), ("B", "2"), ("C", "3"), ("D", "4")),
    frozenset("C"),
    subject="computer_network",
    split="val",
)
CEVAL = Exam("ceval", (TEST_Q,), (OTHER_SUBJECT_DEV, *DEV))

HEADER = "以下是中国关于计算机网络考试的单项选择题，请选出其中的正确答案。"
TEST_BODY = "使用位填充方法，求问传送时要添加几个0____\nA. 1\nB. 2\nC. 3\nD. 4"


def render(
    name: str, exam: Exam, question: Question, shots: int, chat: bool = False, system: str | None = None
) -> Prompt:
    return get_template(name).render(question, exam, RenderOptions(shots, chat, system))


def test_ceval_answer_only_zero_shot() -> None:
    prompt = render("ceval-answer-only", CEVAL, TEST_Q, 0)
    assert prompt.text == f"{HEADER}\n\n{TEST_BODY}\n答案："
    assert prompt.shots == 0 and prompt.messages is None


def test_ceval_answer_only_few_shot_uses_same_subject_dev() -> None:
    prompt = render("ceval-answer-only", CEVAL, TEST_Q, 5)
    assert prompt.shots == 3  # only three dev questions of this subject exist
    assert prompt.text == (
        f"{HEADER}\n\n"
        "例题0____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案：A\n\n"
        "例题1____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案：B\n\n"
        "例题2____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案：C\n\n"
        f"{TEST_BODY}\n答案："
    )
    assert not any(line.endswith(" ") for line in prompt.text.split("\n"))  # the tutorial: no trailing spaces


def test_ceval_cot() -> None:
    assert (
        render("ceval-cot", CEVAL, TEST_Q, 0).text
        == f"{HEADER}\n\n{TEST_BODY}\n答案：让我们一步一步思考，\n1."
    )
    assert render("ceval-cot", CEVAL, TEST_Q, 1).text == (
        f"{HEADER}\n\n"
        "例题0____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n"
        "答案：让我们一步一步思考，\n1. 第0步\n2. 推出结论\n所以答案是A。\n\n"
        f"{TEST_BODY}\n答案：让我们一步一步思考，\n1."
    )


def test_ceval_chat_few_shot_is_multi_turn() -> None:
    prompt = render("ceval-answer-only", CEVAL, TEST_Q, 2, chat=True)
    assert prompt.messages == (
        ("system", f"你是一个中文人工智能助手，{HEADER}"),
        ("user", f"{HEADER}\n\n例题0____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案："),
        ("assistant", "A"),
        ("user", "例题1____\nA. 甲\nB. 乙\nC. 丙\nD. 丁\n答案："),
        ("assistant", "B"),
        ("user", f"{TEST_BODY}\n答案："),
    )
    assert json.loads(prompt.text)[0] == {"role": "system", "content": f"你是一个中文人工智能助手，{HEADER}"}
    cot = render("ceval-cot", CEVAL, TEST_Q, 1, chat=True)
    assert cot.messages is not None
    assert cot.messages[2] == ("assistant", "让我们一步一步思考，\n1. 第0步\n2. 推出结论\n所以答案是A。")
    assert render("ceval-answer-only", CEVAL, TEST_Q, 0, chat=True).messages == (
        ("system", f"你是一个中文人工智能助手，{HEADER}"),
        ("user", f"{HEADER}\n\n{TEST_BODY}\n答案："),
    )


def test_system_prompt() -> None:
    assert render("ceval-answer-only", CEVAL, TEST_Q, 0, system="你是考生。").text.startswith(
        f"你是考生。\n{HEADER}\n\n"
    )
    chat = render("ceval-answer-only", CEVAL, TEST_Q, 0, chat=True, system="你是考生。")
    assert chat.messages is not None and chat.messages[0] == (
        "system",
        f"你是考生。\n你是一个中文人工智能助手，{HEADER}",
    )


QB_EXEMPLAR = Question(
    "1",
    QuestionType.SINGLE,
    "安全色中表示禁止的是（）。",
    (("A", "红色"), ("B", "黄色")),
    frozenset("A"),
    explanation="红色表示禁止。",
    domain="安全生产",
)
QB_JUDGE = Question("2", QuestionType.TRUE_FALSE, "火灾时可以乘坐电梯。", (), False, domain="消防")
QB_TEST = Question(
    "3",
    QuestionType.SINGLE,
    "扑救带电火灾应选用（）。",
    (("A", "水"), ("B", "二氧化碳")),
    frozenset("B"),
    domain="消防",
)
QUALBENCH = Exam("qualbench", (QB_EXEMPLAR, QB_JUDGE, QB_TEST))
QB_SINGLE_INSTRUCTION = (
    "请回答下面的单项选择题，从选项中选出一个正确答案。先写“答案：”和选项字母，再在“解析：”后说明理由。"
)


def test_kaoshi_qualbench_wording_one_exemplar_of_the_same_type() -> None:
    prompt = render("qualbench-kaoshi", QUALBENCH, QB_TEST, 1)
    assert prompt.text == (
        f"{QB_SINGLE_INSTRUCTION}\n\n"
        "题目：安全色中表示禁止的是（）。\nA．红色\nB．黄色\n答案：A\n解析：红色表示禁止。\n\n"
        "题目：扑救带电火灾应选用（）。\nA．水\nB．二氧化碳\n答案："
    )
    # the exemplar is never the question itself, and is of the same type
    assert render("qualbench-kaoshi", QUALBENCH, QB_EXEMPLAR, 1).shots == 1
    assert "扑救带电火灾" in render("qualbench-kaoshi", QUALBENCH, QB_EXEMPLAR, 1).text.split("\n\n")[1]
    assert render("qualbench-kaoshi", QUALBENCH, QB_JUDGE, 1).shots == 0


def test_qualbench_variants() -> None:
    expert = render("qualbench-kaoshi-expert", QUALBENCH, QB_TEST, 1).text
    assert expert.startswith(
        "你是一名资深顾问，精通中国大陆的法律法规、国家标准和行业执业规范。作答时请依据相关法规和标准。\n"
        f"{QB_SINGLE_INSTRUCTION}\n\n题目：安全色"
    )
    zero = get_template("qualbench-zero")
    assert zero.default_shots == 0
    assert render("qualbench-zero", QUALBENCH, QB_JUDGE, 0).text == (
        "请判断下面的说法是否正确。先写“答案：正确”或“答案：错误”，再在“解析：”后说明理由。\n\n"
        "题目：火灾时可以乘坐电梯。\n答案："
    )
    chat = render("qualbench-kaoshi", QUALBENCH, QB_TEST, 1, chat=True)
    assert chat.messages == (
        ("system", QB_SINGLE_INSTRUCTION),
        ("user", "题目：安全色中表示禁止的是（）。\nA．红色\nB．黄色"),
        ("assistant", "答案：A\n解析：红色表示禁止。"),
        ("user", "题目：扑救带电火灾应选用（）。\nA．水\nB．二氧化碳"),
    )


def test_lhmke_open_question() -> None:
    open_q = Question("o", QuestionType.OPEN, "简述四不放过原则。", (), "参考", points=5)
    assert render("lhmke", Exam("x", (open_q,)), open_q, 0).text == (
        "请回答下面的主观题。在“答案：”后给出完整、准确的回答。\n\n题目：简述四不放过原则。\n答案："
    )


def test_fewer_shots_when_the_context_is_short() -> None:
    template = get_template("ceval-answer-only")
    limit = len(render("ceval-answer-only", CEVAL, TEST_Q, 1).text)
    prompt = render_fitting(template, TEST_Q, CEVAL, RenderOptions(5), lambda p: len(p.text) <= limit)
    assert prompt.shots == 1
    assert render_fitting(template, TEST_Q, CEVAL, RenderOptions(5), lambda p: False).shots == 0


def test_user_template(tmp_path: Path) -> None:
    path = tmp_path / "mine.j2"
    path.write_text(
        "{{ system }}【{{ type_zh }}】{{ question }}\n"
        "{% for o in options %}{{ o.letter }}) {{ o.text }}\n{% endfor %}"
        "{% for e in exemplars %}例：{{ e.question }} => {{ e.answer }}\n{% endfor %}答：",
        encoding="utf-8",
    )
    template = get_template(f"file:{path}")
    assert template.name.startswith(f"file:{path}@")
    assert render(f"file:{path}", QUALBENCH, QB_TEST, 1).text == (
        "【单选题】扑救带电火灾应选用（）。\nA) 水\nB) 二氧化碳\n例：安全色中表示禁止的是（）。 => A\n答："
    )
    assert get_template(str(path)).name == template.name


def test_user_template_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.j2"
    bad.write_text("{{ question }} {{ answr }} {{ stem }}")
    with pytest.raises(DataError) as info:
        get_template(f"file:{bad}")
    assert str(info.value).startswith(
        f"{bad}: template uses unknown variable(s) answr, stem (available: category,"
    )
    broken = tmp_path / "broken.j2"
    broken.write_text("line one\n{% for x in options %}\n")
    with pytest.raises(DataError, match=r"broken\.j2:2: template syntax error"):
        get_template(f"file:{broken}")
    code_like = tmp_path / "code.j2"
    code_like.write_text("{{ question.__class__.__mro__ }}")
    from jinja2.exceptions import SecurityError

    with pytest.raises(SecurityError):
        render(f"file:{code_like}", QUALBENCH, QB_TEST, 0)
    with pytest.raises(KeyError, match="unknown prompt 'nope'"):
        get_template("nope")


def test_prompt_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "show", "--benchmark", "sample", "--question", "s-safe-7", "--shots", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "# lhmke v1, 1 exemplar(s), completion"
    assert "题目：进入受限空间作业前，应当先进行通风和气体检测。\n答案：正确" in out
    assert out.rstrip().endswith("题目：发生火灾时，可以乘坐普通电梯快速逃生。\n答案：")
    assert (
        main(
            [
                "prompt",
                "show",
                "--benchmark",
                "sample",
                "--question",
                "s-safe-1",
                "--chat",
                "--prompt",
                "qualbench-kaoshi",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "# qualbench-kaoshi v1, 1 exemplar(s), chat" in out
        and "[system]" in out
        and "[assistant]\n答案：B" in out
    )
    assert main(["prompt", "show", "--benchmark", "sample", "--question", "nope"]) == 2


def test_prompt_show_json_is_exactly_what_is_sent(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["prompt", "show", "--benchmark", "sample", "--question", "s-safe-7", "--format", "json"]
    assert main([*base, "--shots", "1"]) == 0
    completion = json.loads(capsys.readouterr().out)
    assert list(completion) == ["text"]
    assert completion["text"].endswith("题目：发生火灾时，可以乘坐普通电梯快速逃生。\n答案：")
    assert main([*base, "--shots", "1", "--no-chat"]) == 0
    assert json.loads(capsys.readouterr().out) == completion
    assert main([*base, "--chat", "--system", "你是考生。"]) == 0
    chat = json.loads(capsys.readouterr().out)
    assert list(chat) == ["messages"]
    roles = [m["role"] for m in chat["messages"]]
    assert roles[0] == "system" and roles[-1] == "user" and "你是考生。" in chat["messages"][0]["content"]
    assert all(set(m) == {"role", "content"} for m in chat["messages"])


def test_pinned_exemplars(capsys: pytest.CaptureFixture[str]) -> None:
    options = RenderOptions(1, exemplar_ids=("3",))
    # a pinned exemplar of another type is not used for this question
    for name in ("qualbench", "qualbench-kaoshi"):
        assert get_template(name).render(QB_EXEMPLAR, QUALBENCH, options).text.count("题目：") == 2
        assert get_template(name).render(QB_JUDGE, QUALBENCH, options).shots == 0
    assert (
        main(["prompt", "show", "--benchmark", "sample", "--question", "s-safe-1", "--exemplars", "dev-s2"])
        == 0
    )
    assert "通货膨胀是指" in capsys.readouterr().out
    assert (
        main(["prompt", "show", "--benchmark", "sample", "--question", "s-safe-1", "--exemplars", "nope"])
        == 2
    )


def test_dev_exemplar_with_the_same_id_as_the_question_is_still_used() -> None:
    # C-Eval numbers dev and val ids from 0 in each split: val question 0 is not dev question 0.
    val_zero = Question(
        "computer_network/0",
        QuestionType.SINGLE,
        "验证题",
        TEST_Q.options,
        frozenset("A"),
        subject="computer_network",
        split="val",
    )
    exam = Exam("ceval", (val_zero,), DEV)
    prompt = render("ceval-answer-only", exam, val_zero, 5)
    assert prompt.shots == 3 and "例题0____" in prompt.text


@pytest.mark.parametrize(
    ("given", "expected"),
    [((None, None), (50, 512)), ((20, None), (20, 20)), ((None, 64), (50, 64)), ((20, 64), (20, 64))],
)
def test_a_budget_resolves_the_options_given(
    given: tuple[int | None, int | None], expected: tuple[int, int]
) -> None:
    from kaoshi.prompts.base import EXAM_BUDGET

    assert EXAM_BUDGET.resolved(*given) == expected


def test_a_budget_refuses_zero_tokens() -> None:
    from kaoshi.prompts.base import DEFAULT_BUDGET

    with pytest.raises(ValueError, match="--max-new-tokens-open must be > 0, got 0"):
        DEFAULT_BUDGET.resolved(None, 0)
