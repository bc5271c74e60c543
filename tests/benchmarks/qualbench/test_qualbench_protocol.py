"""The `qualbench` prompt byte for byte as FORMATS.md states the authors' script builds it, on rows we
write in the published layout (the demo rows are our own questions that start with the demo stems)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.cli.main import main
from kaoshi.prompts import RenderOptions
from kaoshi.prompts.registry import exemplars_for_run
from kaoshi.store import Store

INSTRUCTION = {
    "单选题": "这是一道单选题，请给出你的答案（只需给出单个选项），并进行解析，给出你的理由。\n",
    "多选题": "这是一道多选题，请给出你的答案（只需给出选项），并进行解析，给出你的理由。\n",
    # the quotes are U+201C / U+201D
    "判断题": "这是一道判断题，请给出你的答案（只需给出\u201c正确\u201d或\u201c错误\u201d），"
    "并进行解析，给出你的理由。\n",
}
EXPERT = (
    "你是一位中国专业领域的资深顾问，精通中国大陆的法律法规、国家标准、文化规范和专业实践。这是一道{}，"
    "请根据中国职业资格考试的要求，提供最符合中国大陆专业背景的答案。在解析中，明确引用相关的中国法律法规、"
    "国家标准或行业规范，详细说明你的推理过程，确保答案和解析严格遵循中国大陆的专业标准和文化背景。\n"
)
# Our own rows. The three demo rows start with the stems FORMATS.md names; the rest is invented.
DEMO_SINGLE = "酸碱灭火器是一种内部装有65％的工业硫酸和碳酸氢钠的水溶液作灭火剂的灭火器（自编示例）。"
DEMO_MULTI = "关于运行速度的说法，正确的有下列哪些选项？（自编示例）"
DEMO_JUDGE = "基本建设投资和更新改造投资的综合范围为总投资50万元以上（自编示例）。"
ABCD = "\nA．甲\nB．乙\nC．丙\nD．丁"


def row(idx: int, kind: str, domain: str, question: str, answer: str, explanation: str) -> dict[str, object]:
    return {
        "idx": idx,
        "question_type": kind,
        "domain": domain,
        "question": question,
        "answer": answer,
        "explanation": explanation,
    }


ROWS = [
    row(
        1,
        "单选题",
        "消防",
        "下列做法中，属于安全用电的是（）。\nA．湿手拔插头\nB. 用铜丝代替保险丝"
        "\nC、定期检查线路\nD：私拉电线",
        "C",
        "定期检查线路能发现隐患。",
    ),
    row(2, "单选题", "消防", DEMO_SINGLE + ABCD, "D", "自编解析一。"),
    row(3, "多选题", "建筑工程", DEMO_MULTI + ABCD, "ABC", "自编解析二。"),
    row(4, "判断题", "经济金融", DEMO_JUDGE, "正确", "自编解析三。"),
    row(
        5,
        "多选题",
        "消防",
        "  下列属于燃烧条件的有（）。\nA．可燃物\nB．助燃物\nC．点火源\nD．水  ",
        "ABC",
        "",
    ),
    row(6, "判断题", "消防", "发生火灾时，可以乘坐普通电梯逃生。", "错误", "电梯可能断电。"),
]


def demo_block(row: dict[str, object]) -> str:
    return f"题目：{row['question']}\n答案：{row['answer']}\n解析：{row['explanation']}\n\n"


def expected(row: dict[str, object], demo: dict[str, object] | None, expert: bool = False) -> str:
    kind = str(row["question_type"])
    head = EXPERT.format(kind) if expert else INSTRUCTION[kind]
    return head + (demo_block(demo) if demo else "") + f"题目：{row['question']}\n答案："


@pytest.fixture
def exam_file(tmp_path: Path) -> Path:
    path = tmp_path / "QualBench.json"
    path.write_text(json.dumps(ROWS, ensure_ascii=False), encoding="utf-8")
    return path


def render(path: Path, qid: str, name: str = "qualbench", shots: int = 1, chat: bool = False) -> object:
    exam = load_exam_result("qualbench", path).exam
    template = get_template(name)
    pinned, _ = exemplars_for_run(template, exam, ())
    options = RenderOptions(shots, chat, None, pinned)
    return template.render(exam.question(qid), exam, options)


@pytest.mark.parametrize(("qid", "demo"), [("1", 1), ("5", 2), ("6", 3), ("2", 1)])
def test_completion_prompt_is_the_authors_byte_for_byte(exam_file: Path, qid: str, demo: int) -> None:
    row = ROWS[int(qid) - 1]
    prompt = render(exam_file, qid)
    assert prompt.text == expected(row, ROWS[demo]), prompt.text  # type: ignore[attr-defined]
    assert prompt.shots == 1  # type: ignore[attr-defined]


def test_the_question_is_sent_exactly_as_stored(exam_file: Path) -> None:
    text = render(exam_file, "5").text  # type: ignore[attr-defined]
    # leading/trailing spaces and every option separator kept, nothing re-rendered from parsed options
    assert "题目：  下列属于燃烧条件的有（）。\nA．可燃物\nB．助燃物\nC．点火源\nD．水  \n答案：" in text
    assert "B. 用铜丝代替保险丝\nC、定期检查线路\nD：私拉电线" in render(exam_file, "1").text  # type: ignore[attr-defined]


def test_expert_persona_and_zero_shot(exam_file: Path) -> None:
    assert render(exam_file, "6", "qualbench-expert").text == expected(ROWS[5], ROWS[3], expert=True)  # type: ignore[attr-defined]
    zero = render(exam_file, "6", shots=0)
    assert zero.text == expected(ROWS[5], None) and zero.shots == 0  # type: ignore[attr-defined]


def test_chat_is_the_same_text_as_one_user_message(exam_file: Path) -> None:
    prompt = render(exam_file, "1", chat=True)
    assert prompt.messages == (("user", expected(ROWS[0], ROWS[1])),)  # type: ignore[attr-defined]


def test_a_missing_demo_is_replaced_by_the_first_of_its_type_with_a_note(tmp_path: Path) -> None:
    rows = [r for r in ROWS if r["idx"] != 3]  # no multi-choice demo row
    path = tmp_path / "q.json"
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    exam = load_exam_result("qualbench", path).exam
    pinned, notes = exemplars_for_run(get_template("qualbench"), exam, ())
    assert sorted(pinned) == ["2", "4", "5"]
    assert len(notes) == 1 and "多选题" in notes[0] and "'5'" in notes[0]
    # the authors' script uses its fixed demo for every question, the demo row itself included
    prompt = get_template("qualbench").render(exam.question("5"), exam, RenderOptions(1, exemplar_ids=pinned))
    assert prompt.text == expected(ROWS[4], ROWS[4])


def test_prompt_show_and_run_record_the_demos(
    exam_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["prompt", "show", "--data", str(exam_file), "--question", "6", "--format", "json"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == {"text": expected(ROWS[5], ROWS[3])}
    assert main([*args, "--chat"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "messages": [{"role": "user", "content": expected(ROWS[5], ROWS[3])}]
    }
    store = str(tmp_path / "s.sqlite")
    run = ["run", "--data", str(exam_file), "--model", "constant:A", "--run-name", "r", "--store", store]
    assert main(run) == 0
    capsys.readouterr()
    with Store(Path(store)) as opened:
        spec = opened.get_run("r").spec
    assert spec.prompt == "qualbench" and spec.prompt_version == 2
    assert sorted(spec.exemplars) == ["2", "3", "4"]


def test_exemplars_file_supplies_the_demo_and_is_recorded(
    exam_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exemplars = tmp_path / "demos.jsonl"
    exemplars.write_text(
        json.dumps(
            {
                "id": "d1",
                "type": "judge",
                "question": "自编判断示例。",
                "answer": "错误",
                "explanation": "自编。",
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    args = ["prompt", "show", "--data", str(exam_file), "--question", "6", "--format", "json"]
    assert main([*args, "--exemplars-file", str(exemplars)]) == 0
    captured = capsys.readouterr()
    text = json.loads(captured.out)["text"]
    assert text == INSTRUCTION["判断题"] + "题目：自编判断示例。\n答案：错误\n解析：自编。\n\n" + (
        f"题目：{ROWS[5]['question']}\n答案："
    )
    store = str(tmp_path / "s.sqlite")
    run = ["run", "--data", str(exam_file), "--model", "constant:A", "--run-name", "r", "--store", store]
    assert main([*run, "--exemplars-file", str(exemplars)]) == 0
    exemplars.write_text(exemplars.read_text(encoding="utf-8").replace("自编。", "改过。"), encoding="utf-8")
    assert main([*run, "--exemplars-file", str(exemplars)]) == 2  # another file: refused on resume
    assert "exemplars_file" in capsys.readouterr().err
