"""AGIEval's Chinese tasks: rows written here in the published layout (data/v1/{task}.jsonl; our own
questions), its quirks, bad rows, the few-shot CSV, the prompts byte for byte, detection, and a run end to
end with the random baseline."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.benchmarks import detect, detect_benchmark, get_benchmark, get_template, load_exam_result
from kaoshi.benchmarks.agieval.demos import read_few_shot_demos
from kaoshi.data import DataError, QuestionType
from kaoshi.data.shuffle import shuffle_question
from kaoshi.prompts import RenderOptions
from kaoshi.qtypes import extract_answer
from tests.support.files import write_jsonl
from tests.support.runs import cli, cli_report

PHYSICS: list[dict[str, Any]] = [
    {
        "passage": None,
        "question": "一辆汽车以 10 m/s 的速度匀速行驶 5 s，通过的路程为",
        "options": ["(A)2 m", "(B)15 m", "(C)50 m", "(D)500 m"],
        "label": "C",
        "answer": None,
        "other": {"source": "kaoshi 自编"},
    },
    {
        "passage": None,
        "question": "关于力，下列说法正确的是（ ）",
        "options": [
            "(A)力是物体间的相互作用",
            "(B)只有接触的物体间才有力",
            "(C)力可以改变物体的运动状态 ",
            "(D)力的单位是焦耳",
        ],
        "label": ["A", "C"],
        "answer": None,
        "other": None,
    },
]
LOGIQA_ZH: list[dict[str, Any]] = [
    {
        "passage": "某班所有参加合唱队的同学都参加了舞蹈队。小林没有参加舞蹈队。",
        "question": "由此可以推出：",
        "options": [
            "(A)小林参加了合唱队",
            "(B)小林没有参加合唱队",
            "(C)小林参加了美术队",
            "(D)舞蹈队的同学都参加了合唱队",
        ],
        "label": "B",
        "answer": None,
        "other": None,
    }
]
JEC_QA_KD: list[dict[str, Any]] = [
    {
        "passage": None,
        "question": "下列哪一机关有权制定行政法规？",
        "options": ["(A)国务院", "(B)省人民政府", "(C)市人民代表大会", "(D)县人民法院"],
        "label": ["A"],
        "answer": None,
        "other": None,
    },
    {
        "passage": None,
        "question": "关于合同的订立，下列哪些说法是正确的？",
        "options": ["(A)要约可以撤回", "(B)承诺可以撤回", "(C)要约一经发出不得撤销", "(D)合同只能书面订立"],
        "label": ["A", "B"],
        "answer": None,
        "other": None,
    },
]
MATHCLOZE: list[dict[str, Any]] = [
    {
        "passage": None,
        "question": "已知 $2x+3=11$，则 $x=$____.",
        "options": None,
        "label": None,
        "answer": "4",
        "other": None,
    },
    {
        "passage": None,
        "question": "等差数列 $1,3,5, \\cdots$ 的第 4 项为____，前 4 项和为____.",
        "options": None,
        "label": None,
        "answer": "7;16",
        "other": {"source": "kaoshi 自编"},
    },
]
ENGLISH: list[dict[str, Any]] = [
    {
        "passage": "Tom likes reading. Every evening he reads for an hour.",
        "question": "How long does Tom read every evening?",
        "options": ["(A)Half an hour.", "(B)An hour.", "(C)Two hours.", "(D)Three hours."],
        "label": "B",
        "answer": None,
        "other": None,
    }
]
LSAT: list[dict[str, Any]] = [
    {
        "passage": "p",
        "question": "q",
        "options": ["(A)a", "(B)b"],
        "label": "A",
        "answer": None,
        "other": None,
    }
]


def write_task(folder: Path, task: str, rows: list[Any], **options: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_jsonl(folder / f"{task}.jsonl", rows, **options)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An AGIEval repository: data/v1 with four Chinese tasks (one in CRLF), an English one and an English
    task AGIEval also has."""
    v1 = tmp_path / "AGIEval" / "data" / "v1"
    write_task(v1, "gaokao-physics", PHYSICS)
    write_task(v1, "logiqa-zh", LOGIQA_ZH, newline="\r\n")
    write_task(v1, "jec-qa-kd", JEC_QA_KD)
    write_task(v1, "gaokao-mathcloze", MATHCLOZE)
    write_task(v1, "lsat-ar", LSAT)
    return tmp_path / "AGIEval"


def test_a_repository_loads_its_chinese_tasks(repo: Path) -> None:
    result = load_exam_result("agieval", repo)
    exam = result.exam
    assert [q.id for q in exam.questions] == [
        "gaokao-physics/0",
        "gaokao-physics/1",
        "gaokao-mathcloze/0",
        "gaokao-mathcloze/1",
        "logiqa-zh/0",
        "jec-qa-kd/0",
        "jec-qa-kd/1",
    ]  # AGIEval's task order
    assert [(q.type, q.answer) for q in exam.questions] == [
        (QuestionType.SINGLE, frozenset("C")),
        (QuestionType.MULTI, frozenset("AC")),
        (QuestionType.CLOZE, "4"),
        (QuestionType.CLOZE, "7;16"),
        (QuestionType.SINGLE, frozenset("B")),
        (QuestionType.MULTI, frozenset("A")),  # a one-letter list: the exact set {A}
        (QuestionType.MULTI, frozenset("AB")),
    ]
    physics, multi, cloze, _, logic, *_ = exam.questions
    assert physics.options == (("A", "2 m"), ("B", "15 m"), ("C", "50 m"), ("D", "500 m"))
    assert multi.options[2] == ("C", "力可以改变物体的运动状态")  # stripped; the prompt keeps the string
    assert physics.stem == "一辆汽车以 10 m/s 的速度匀速行驶 5 s，通过的路程为"  # null passage
    assert logic.stem == "某班所有参加合唱队的同学都参加了舞蹈队。小林没有参加舞蹈队。\n由此可以推出："
    assert (cloze.options, cloze.subject, cloze.category, cloze.split) == (
        (),
        "gaokao-mathcloze",
        "Gaokao",
        "test",
    )
    assert (logic.category, exam.questions[-1].category) == ("LogiQA", "JEC-QA")
    assert physics.source is not None and physics.source.line == 1
    assert result.warnings == (f"{repo / 'data' / 'v1'}: skipped the English AGIEval tasks lsat-ar",)
    assert exam.fewshot == ()
    assert exam.metadata["benchmark"] == "agieval" and exam.metadata["split"] == "test"


def test_data_takes_the_repository_its_v1_folder_or_one_task_file(repo: Path) -> None:
    v1 = repo / "data" / "v1"
    assert len(load_exam_result("agieval", v1).exam.questions) == 7
    single = load_exam_result("agieval", v1 / "gaokao-physics.jsonl").exam
    assert [q.id for q in single.questions] == ["gaokao-physics/0", "gaokao-physics/1"]
    some = load_exam_result("agieval", repo, subjects=["jec-qa-kd", "logiqa-zh"]).exam
    assert {q.subject for q in some.questions} == {"jec-qa-kd", "logiqa-zh"}
    with pytest.raises(DataError, match="no file for task"):
        load_exam_result("agieval", repo, subjects=["gaokao-history"])
    with pytest.raises(DataError, match=r"AGIEval has a single split \('test'\), got 'dev'"):
        load_exam_result("agieval", repo, "dev")
    with pytest.raises(DataError, match="'lsat-ar' is an English AGIEval task"):
        load_exam_result("agieval", v1 / "lsat-ar.jsonl")
    (repo.parent / "empty").mkdir()
    with pytest.raises(DataError, match="no AGIEval task files"):
        load_exam_result("agieval", repo.parent / "empty")
    with pytest.raises(DataError, match="needs --data PATH"):
        load_exam_result("agieval")


def test_quirks_one_option_string_blank_lines_bom(tmp_path: Path) -> None:
    row = {
        "passage": "",
        "question": "下列城市中，位于长江沿岸的是（   ）",
        "options": ["A. 武汉\tB. 西安\r\nC. 兰州\tD. 拉萨\r"],
        "label": "A",
        "answer": None,
        "other": {"source": "kaoshi 自编"},
    }
    path = write_task(tmp_path, "gaokao-geography", ["", json.dumps(row, ensure_ascii=False), ""], bom=True)
    [question] = load_exam_result("agieval", path).exam.questions
    assert question.options == (("A", "武汉"), ("B", "西安"), ("C", "兰州"), ("D", "拉萨"))
    assert question.id == "gaokao-geography/0" and question.stem == row["question"]


BAD_ROWS = [
    ([1, 2], "expected a JSON object, got list"),
    ({**PHYSICS[0], "label": "E"}, "field 'label': label 'E' names a letter that is not an option (ABCD)"),
    (
        {**PHYSICS[0], "label": "A or C"},
        "field 'label': label 'A or C': a text label is one letter (several: a list)",
    ),
    ({**PHYSICS[0], "label": "AE"}, "field 'label': label 'AE' names a letter that is not an option (ABCD)"),
    ({**PHYSICS[0], "label": ["A", "A"]}, "field 'label': answer ['A', 'A'] repeats a letter"),
    ({**PHYSICS[0], "label": ["。"]}, "field 'label': answer is empty"),
    ({**PHYSICS[0], "label": 3}, "field 'label': expected a letter or a list of letters, got 3"),
    (
        {**PHYSICS[0], "label": None},
        "field 'label': missing: a choice row needs 'label', a cloze row 'answer'",
    ),
    (
        {**PHYSICS[0], "options": ["(A)2 m", "(B) ", "(C)5", "(D)6"], "label": "B"},
        "field 'label': label 'B' names option B, which has no text",
    ),
    (
        {**PHYSICS[0], "options": [f"({letter}){letter}" for letter in "ABCDEFGH"]},
        "field 'options': at most 7 options (A-G), got 8",
    ),
    (
        {**PHYSICS[0], "options": ["(A)2 m", 15, "(C)50 m", "(D)500 m"]},
        "field 'options': every option must be text",
    ),
    ({**PHYSICS[0], "options": "(A)2 m (B)15 m"}, "field 'options': expected a list of option strings"),
    ({**PHYSICS[0], "question": None}, "field 'question': missing required field"),
    ({**PHYSICS[0], "passage": 7}, "field 'passage': expected text or null, got int"),
    ({**PHYSICS[0], "question": " "}, "field 'question': is empty (and the row has no passage)"),
    ({**MATHCLOZE[1], "answer": "7;;16"}, "field 'answer': cloze answer '7;;16' has an empty blank"),
    ({**MATHCLOZE[1], "answer": ["7", "16"]}, "field 'answer': expected the cloze answer as text"),
    ("{not json", "invalid JSON"),
]


@pytest.mark.parametrize(("row", "message"), BAD_ROWS)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, row: Any, message: str) -> None:
    path = write_task(tmp_path, "gaokao-physics", [PHYSICS[0], row])
    with pytest.raises(DataError) as info:
        load_exam_result("agieval", path)
    [error] = info.value.errors
    assert str(error).startswith(f"{path}:2: {message}")
    skipped = load_exam_result("agieval", path, on_invalid="skip")
    assert [q.id for q in skipped.exam.questions] == ["gaokao-physics/0"]


# -- quirks of the published rows ---------------------------------------------------------------------------
# Rows written here (our own questions) in each form AGIEval's published files use besides '(A)text'; each
# loads, read as AGIEval's prompt shows it, and each kind is one warning naming its file:lines.
def choice_row(options: list[str], label: Any, question: str = "下列说法正确的是") -> dict[str, Any]:
    return {"passage": None, "question": question, "options": options, "label": label, "answer": None,
            "other": None}  # fmt: skip


QUIRKY_ROWS: list[tuple[dict[str, Any], tuple[tuple[str, str], ...], Any, str | tuple[str, ...]]] = [
    (  # gaokao-chinese: '  A．' (spaces, a full-width point)
        choice_row(["  A．春天来了", "  B．夏天到了", "  C．秋天凉了", "  D．冬天冷了"], "A"),
        (("A", "春天来了"), ("B", "夏天到了"), ("C", "秋天凉了"), ("D", "冬天冷了")),
        frozenset("A"),
        "write options as 'A．…', not '(A)…'",
    ),
    (  # gaokao-english: ' A. text   '
        choice_row(
            [" A. They left.   ", "     B. They stayed.   ", "   C. They slept.", "   D. They ate. "], "B"
        ),
        (("A", "They left."), ("B", "They stayed."), ("C", "They slept."), ("D", "They ate.")),
        frozenset("B"),
        "write options as 'A.…', not '(A)…'",
    ),
    (  # logiqa-zh: 'A．' with no space, one 'A． ' with one
        choice_row(["A．甲去了", "B． 乙去了", "C．丙去了", "D．丁去了"], "C"),
        (("A", "甲去了"), ("B", "乙去了"), ("C", "丙去了"), ("D", "丁去了")),
        frozenset("C"),
        "write options as 'A．…', not '(A)…'",
    ),
    (  # logiqa-zh: 'A 甲' (a letter and a space)
        choice_row(["A 有人参", "B 没有人参", "C 有黄芪", "D 没有黄芪"], "D"),
        (("A", "有人参"), ("B", "没有人参"), ("C", "有黄芪"), ("D", "没有黄芪")),
        frozenset("D"),
        "write options as 'A …', not '(A)…'",
    ),
    (
        choice_row(["A、一号", "B、二号", "C、三号", "D、四号"], "B"),
        (("A", "一号"), ("B", "二号"), ("C", "三号"), ("D", "四号")),
        frozenset("B"),
        "write options as 'A、…', not '(A)…'",
    ),
    (  # 'A: ', 'B: ' then '(C)', '(D)' in one row
        choice_row(["A: 晴", "B: 雨", "(C)雪", "(D)雾"], "A"),
        (("A", "晴"), ("B", "雨"), ("C", "雪"), ("D", "雾")),
        frozenset("A"),
        "write options as 'A:…', not '(A)…'",
    ),
    (
        choice_row(["A．真", "B。假", "C．真", "D。假"], "A"),
        (("A", "真"), ("B", "假"), ("C", "真"), ("D", "假")),
        frozenset("A"),
        ("write options as 'A。…', not '(A)…'", "write options as 'A．…', not '(A)…'"),
    ),
    (  # logiqa-zh: written out of order; the label names the written letter
        choice_row(["(A) 一和二", "(C) 三和五", "(B) 二和三", "(D) 四和五"], "B"),
        (("A", "一和二"), ("B", "二和三"), ("C", "三和五"), ("D", "四和五")),
        frozenset("B"),
        "write their options out of letter order (read by the letters written, as AGIEval's prompt shows "
        "them)",
    ),
    (  # gaokao-history: '(C)' written for D
        choice_row(["(A)商", "(B)周", "(C)秦", "(C)汉"], "D"),
        (("A", "商"), ("B", "周"), ("C", "秦"), ("D", "汉")),
        frozenset("D"),
        "write an option's letter where another belongs, e.g. '(C)' twice (read by place)",
    ),
    (  # gaokao-chemistry: options without a letter
        choice_row(["钠\u3000第三周期", "钾   第四周期", "(C)铷\u3000第五周期", "(D)铯\u3000第六周期"], "A"),
        (
            ("A", "钠\u3000第三周期"),
            ("B", "钾   第四周期"),
            ("C", "铷\u3000第五周期"),
            ("D", "铯\u3000第六周期"),
        ),
        frozenset("A"),
        "have an option without a letter (read by place)",
    ),
    (  # a capital and a space is text, not a prefix, in a row where an option has no letter
        choice_row(["A kite.", "Two kites.", "(C)Three kites.", "(D)No kite."], "C"),
        (("A", "A kite."), ("B", "Two kites."), ("C", "Three kites."), ("D", "No kite.")),
        frozenset("C"),
        "have an option without a letter (read by place)",
    ),
    (  # gaokao-chemistry: '(D)' alone
        choice_row(["(A)NaCl", "(B)NaHSO4", "(C)HCOONa", "(D)"], "B"),
        (("A", "NaCl"), ("B", "NaHSO4"), ("C", "HCOONa"), ("D", "")),
        frozenset("B"),
        "have an option with no text after its letter",
    ),
    (  # gaokao-mathqa: multi-answer labels written as text
        choice_row(["(A)甲", "(B)乙", "(C)丙", "(D)丁"], "A B D"),
        (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁")),
        frozenset("ABD"),
        "write a multi-answer label as text ('AD', 'A B D'): read as a multi-answer question on the exact "
        "set (AGIEval's scorer compares one letter with the text, so never credits it)",
    ),
    (  # jec-qa-ca: a mark among the letters
        choice_row(["(A)甲", "(B)乙", "(C)丙", "(D)丁"], ["A", "C", "。"]),
        (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁")),
        frozenset("AC"),
        "have a mark among the label's letters (['A', 'C', 'D', '。']): left out",
    ),
    (  # jec-qa-kd: an empty label list
        choice_row(["(A)甲", "(B)乙", "(C)丙", "(D)丁"], []),
        (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁")),
        None,
        "have an empty label list and no answer: loaded without a gold answer, so answered but not graded "
        "(AGIEval's scorer counts it wrong)",
    ),
]


@pytest.mark.parametrize(("row", "options", "gold", "warning"), QUIRKY_ROWS)
def test_a_published_quirk_loads_with_a_warning_naming_file_and_line(
    tmp_path: Path, row: dict[str, Any], options: Any, gold: Any, warning: str | tuple[str, ...]
) -> None:
    path = write_task(tmp_path, "logiqa-zh", [LOGIQA_ZH[0], row])
    result = load_exam_result("agieval", path)  # on_invalid="fail": no error
    question = result.exam.question("logiqa-zh/1")
    assert (question.options, question.answer) == (options, gold)
    expected = (warning,) if isinstance(warning, str) else warning
    assert result.warnings == tuple(f"1 row(s) {kind}: {path}:2" for kind in expected)
    # The prompt shows the option strings as published.
    prompt = get_template("agieval").render(question, result.exam, RenderOptions(0)).text
    assert " ".join(row["options"]) in prompt


def test_quirks_are_counted_per_kind_across_files_and_demos(tmp_path: Path) -> None:
    dotted = choice_row(["A．一", "B．二", "C．三", "D．四"], "A")
    v1 = tmp_path / "data" / "v1"
    history = write_task(v1, "gaokao-history", [dotted, LOGIQA_ZH[0], dotted])
    logic = write_task(v1, "logiqa-zh", [dotted, dotted])
    demos = write_demos(
        tmp_path / "data" / "few_shot_prompts.csv",
        [["", "gaokao-history"], ["sample 1", repr(dotted)], ["explanation 1", "因为。"]],
    )
    result = load_exam_result("agieval", tmp_path)
    assert len(result.exam.questions) == 5 and result.exam.fewshot[0].options[0] == ("A", "一")
    assert result.warnings == (
        f"{demos}: no column for task(s) logiqa-zh; they get no demos",
        f"5 row(s) write options as 'A．…', not '(A)…': {history}:1, {history}:3, {logic}:1 and 2 more",
    )
    few = load_exam_result(
        "agieval", tmp_path, subjects=["gaokao-history"]
    )  # the demo's place is its CSV line
    assert (
        few.warnings[-1]
        == f"3 row(s) write options as 'A．…', not '(A)…': {history}:1, {history}:3, {demos}:2"
    )


def test_an_unlabelled_row_is_answered_but_not_graded(tmp_path: Path) -> None:
    path = write_task(
        tmp_path, "jec-qa-kd", [JEC_QA_KD[0], choice_row(["(A)甲", "(B)乙", "(C)丙", "(D)丁"], [])]
    )
    result = kaoshi.evaluate(kaoshi.load_exam("agieval", path), lambda prompt: "答案是A")
    assert [(s.question_id, s.correct) for s in result.samples] == [
        ("jec-qa-kd/0", True),
        ("jec-qa-kd/1", None),
    ]


# -- few-shot demos ---------------------------------------------------------------------------------------
DEMO_PHYSICS_1: dict[str, Any] = {
    "passage": None,
    "question": "物体做自由落体运动，1 s 末的速度约为",
    "options": ["(A)1 m/s", "(B)5 m/s", "(C)10 m/s", "(D)20 m/s"],
    "label": "C",
    "answer": None,
    "other": {"source": "kaoshi 自编"},
}
DEMO_PHYSICS_2: dict[str, Any] = {
    "passage": "一段背景材料。",
    "question": "下列物理量中属于矢量的是",
    "options": ["(A)速度", "(B)质量", "(C)时间", "(D)加速度"],
    "label": ["A", "D"],
    "answer": None,
    "other": None,
}
DEMO_CLOZE: dict[str, Any] = {
    "passage": None,
    "question": "计算 $3\\times 4=$____.",
    "options": None,
    "label": None,
    "answer": "12",
}


def write_demos(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return path


def demo_rows() -> list[list[str]]:
    return [
        ["", "lsat-ar", "gaokao-physics", "gaokao-mathcloze"],
        ["sample 1", "{'passage': 'p'}", repr(DEMO_PHYSICS_1), repr(DEMO_CLOZE)],
        ["explanation 1", "e", "由 v=gt，\n\n得 v=10 m/s。", "3 乘 4 得 12。"],
        ["sample 2", "", repr(DEMO_PHYSICS_2), ""],
        ["explanation 2", "", "速度和加速度有方向。", ""],
    ]


@pytest.fixture
def repo_with_demos(repo: Path) -> Path:
    write_demos(repo / "data" / "few_shot_prompts.csv", demo_rows())
    return repo


def test_few_shot_demos_from_the_csv(repo_with_demos: Path) -> None:
    exam = load_exam_result("agieval", repo_with_demos).exam
    assert [(q.id, q.type, q.answer, q.split) for q in exam.fewshot] == [
        ("gaokao-physics/demo-1", QuestionType.SINGLE, frozenset("C"), "dev"),
        ("gaokao-physics/demo-2", QuestionType.MULTI, frozenset("AD"), "dev"),
        ("gaokao-mathcloze/demo-1", QuestionType.CLOZE, "12", "dev"),
    ]
    first = exam.fewshot[0]
    assert first.explanation == "由 v=gt，\n得 v=10 m/s。"  # paragraphs joined, as AGIEval's code does
    assert first.source is not None and first.source.line == 2
    assert exam.fewshot[1].source is not None and exam.fewshot[1].source.line == 6  # after a 3-line cell
    assert exam.metadata["few_shot_file"] == str(repo_with_demos / "data" / "few_shot_prompts.csv")
    # one task file finds the CSV next to data/v1 as well
    single = load_exam_result("agieval", repo_with_demos / "data" / "v1" / "gaokao-mathcloze.jsonl").exam
    assert [q.id for q in single.fewshot] == ["gaokao-mathcloze/demo-1"]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("{'passage': None, 'question': ", "field 'gaokao-physics': demo 1 is not a Python dict literal"),
        ("__import__('os').system('echo hi')", "field 'gaokao-physics': demo 1 is not a Python dict literal"),
        ("['a', 'b']", "field 'gaokao-physics': demo 1 is a list, not a dict"),
        (
            repr({**DEMO_PHYSICS_1, "label": "F"}),
            "field 'gaokao-physics: label': demo 1: label 'F' names a letter that is not an option (ABCD)",
        ),
    ],
)
def test_a_bad_demo_names_file_line_and_column(repo: Path, cell: str, message: str) -> None:
    rows = demo_rows()
    rows[1][2] = cell
    path = write_demos(repo / "data" / "few_shot_prompts.csv", rows)
    with pytest.raises(DataError) as info:
        load_exam_result("agieval", repo)
    [error] = info.value.errors
    assert str(error).startswith(f"{path}:2: {message}")


def test_demo_file_shapes(tmp_path: Path) -> None:
    path = write_demos(tmp_path / "few_shot_prompts.csv", demo_rows())
    demos, errors, notes = read_few_shot_demos(path, ["gaokao-physics", "gaokao-history"])
    assert [q.id for q in demos] == ["gaokao-physics/demo-1", "gaokao-physics/demo-2"] and errors == []
    assert notes == [f"{path}: no column for task(s) gaokao-history; they get no demos"]
    path.write_text('"a,b\n', encoding="utf-8")  # a quoted cell never closed
    demos, errors, _ = read_few_shot_demos(path, ["gaokao-physics"])
    assert demos == [] and [str(e) for e in errors] == [f"{path}:1: malformed CSV: unexpected end of data"]
    path.write_text("", encoding="utf-8")
    assert [str(e) for e in read_few_shot_demos(path, ["gaokao-physics"])[1]] == [
        f"{path}:1: empty file (expected a header row of task names)"
    ]


# -- prompts, byte for byte (AGIEval's src/dataset_loader.py) ---------------------------------------------
def render(
    question_id: str, data: Path, shots: int = 0, chat: bool = False, system: str | None = None
) -> Any:
    exam = load_exam_result("agieval", data).exam
    prompt = get_template("agieval").render(
        exam.question(question_id), exam, RenderOptions(shots, chat, system)
    )
    return prompt


def test_zero_shot_prompts(repo: Path) -> None:
    assert render("gaokao-physics/1", repo).text == (
        "问题：关于力，下列说法正确的是（ ） 选项：(A)力是物体间的相互作用 (B)只有接触的物体间才有力 "
        "(C)力可以改变物体的运动状态  (D)力的单位是焦耳\n答案：从A到D, 我们应选择"
    )
    assert render("logiqa-zh/0", repo).text == (
        "某班所有参加合唱队的同学都参加了舞蹈队。小林没有参加舞蹈队。问题：由此可以推出： "
        "选项：(A)小林参加了合唱队 (B)小林没有参加合唱队 (C)小林参加了美术队 (D)舞蹈队的同学都参加了合唱队\n"
        "答案：从A到D, 我们应选择"
    )
    assert render("gaokao-mathcloze/1", repo).text == (
        "问题：等差数列 $1,3,5, \\cdots$ 的第 4 项为____，前 4 项和为____.\n答案："
    )
    chat = render("gaokao-physics/0", repo, chat=True, system="你是考生。")
    assert chat.messages == (
        ("system", "你是考生。\nYou are a helpful AI assistant."),
        ("user", "问题：一辆汽车以 10 m/s 的速度匀速行驶 5 s，通过的路程为 "
                 "选项：(A)2 m (B)15 m (C)50 m (D)500 m\n答案：从A到D, 我们应选择"),
    )  # fmt: skip
    assert render("gaokao-physics/0", repo, system="你是考生。").text.startswith("你是考生。\n问题：一辆汽车")


def test_zero_shot_quirks_english_task_three_options_one_option_string(tmp_path: Path) -> None:
    write_task(tmp_path, "gaokao-english", ENGLISH)
    three = {**PHYSICS[0], "options": ["(A)2 m", "(B)15 m", "(C)50 m"]}
    one = {**PHYSICS[0], "options": ["A. 2 m\tB. 15 m\tC. 50 m"], "label": "A"}
    write_task(tmp_path, "gaokao-physics", [three, one])
    assert render("gaokao-english/0", tmp_path).text == (
        "Tom likes reading. Every evening he reads for an hour.Q: How long does Tom read every evening? "
        "Answer Choices: (A)Half an hour. (B)An hour. (C)Two hours. (D)Three hours.\n"
        "A: Among A through D, the answer is"
    )
    assert render("gaokao-physics/0", tmp_path).text.endswith("(C)50 m\n答案：从A到C, 我们应选择")
    # One option string: AGIEval's code names D as the last letter, whatever the string holds.
    assert render("gaokao-physics/1", tmp_path).text.endswith(
        "选项：A. 2 m\tB. 15 m\tC. 50 m\n答案：从A到D, 我们应选择"
    )


def test_few_shot_prompts(repo_with_demos: Path) -> None:
    physics = render("gaokao-physics/0", repo_with_demos, shots=5)
    assert physics.shots == 2
    assert physics.text == (
        "以下是考试中各个问题的答案。\n"
        "问题 1.    物体做自由落体运动，1 s 末的速度约为\n"
        "从以下选项中选择:    (A)1 m/s (B)5 m/s (C)10 m/s (D)20 m/s\n"
        "答案是 C\n\n"
        "问题 2.   一段背景材料。 下列物理量中属于矢量的是\n"
        "从以下选项中选择:    (A)速度 (B)质量 (C)时间 (D)加速度\n"
        "答案是 ['A', 'D']\n\n"
        "问题 3.    一辆汽车以 10 m/s 的速度匀速行驶 5 s，通过的路程为\n"
        "从以下选项中选择:    (A)2 m (B)15 m (C)50 m (D)500 m\n"
    )
    assert render("gaokao-physics/0", repo_with_demos, shots=1).text.count("问题 ") == 2
    cloze = render("gaokao-mathcloze/0", repo_with_demos, shots=5)
    assert cloze.text == (
        "以下是考试中各个问题的答案。\n问题 1.   计算 $3\\times 4=$____.\n答案是 12\n\n"
        "问题 2.   已知 $2x+3=11$，则 $x=$____.\n"
    )
    chat = render("gaokao-mathcloze/0", repo_with_demos, shots=5, chat=True)
    assert chat.messages == (
        ("system", "You are a helpful AI assistant."),
        ("user", "问题 1.   计算 $3\\times 4=$____.\n"),
        ("assistant", "答案是 12"),
        ("user", "问题 2.   已知 $2x+3=11$，则 $x=$____.\n"),
    )
    # A task without demos stays zero-shot.
    assert render("jec-qa-kd/0", repo_with_demos, shots=5).shots == 0


@pytest.mark.parametrize(
    ("question_id", "reply", "expected"),
    [
        ("gaokao-physics/1", "答案是 ['A', 'C']", frozenset("AC")),  # a multi-answer demo's own form
        ("gaokao-physics/1", '答案是 ["A", "C"]', frozenset("AC")),
        ("gaokao-physics/1", "(A)(C)", frozenset("AC")),
        ("jec-qa-kd/0", "答案是 ['A']", frozenset("A")),
        ("gaokao-physics/0", "答案是 C", frozenset("C")),
        ("gaokao-physics/0", " C", frozenset("C")),  # a base model continuing '我们应选择'
    ],
)
def test_answers_written_as_agievals_demos_write_them(
    repo: Path, question_id: str, reply: str, expected: frozenset[str]
) -> None:
    question = load_exam_result("agieval", repo).exam.question(question_id)
    assert extract_answer(question, reply).answer == expected


def test_a_shuffled_question_is_rendered_from_its_parsed_fields(repo: Path) -> None:
    exam = load_exam_result("agieval", repo).exam
    shuffled = shuffle_question(exam.question("logiqa-zh/0"), seed=1)
    text = get_template("agieval").render(shuffled, exam, RenderOptions(0)).text
    options = " ".join(f"({letter}){body}" for letter, body in shuffled.options)
    assert text == f"问题：{shuffled.stem} 选项：{options}\n答案：从A到D, 我们应选择"


# -- detection ----------------------------------------------------------------------------------------------
def test_detection(repo: Path, tmp_path: Path) -> None:
    v1 = repo / "data" / "v1"
    assert detect_benchmark(repo) == "agieval"
    assert detect_benchmark(v1) == "agieval"
    assert detect_benchmark(v1 / "jec-qa-kd.jsonl") == "agieval"
    renamed = write_jsonl(tmp_path / "my-physics.jsonl", PHYSICS)  # by its fields
    assert detect_benchmark(renamed) == "agieval"
    kaoshi_rows = write_jsonl(tmp_path / "exam.jsonl", [{"id": "1", "type": "single", "question": "q",
                                                         "options": ["a", "b"], "answer": "A"}])  # fmt: skip
    assert detect_benchmark(kaoshi_rows) == "kaoshi"
    (tmp_path / "empty").mkdir()
    assert detect(tmp_path / "empty") != "agieval"
    write_task(tmp_path / "english" / "data" / "v1", "lsat-ar", LSAT)
    assert detect(tmp_path / "english") != "agieval"
    (tmp_path / "ceval" / "val").mkdir(parents=True)
    (tmp_path / "ceval" / "val" / "law_val.csv").write_text("id,question,A,B,C,D,answer\n", encoding="utf-8")
    assert detect(tmp_path / "ceval") != "agieval"


# -- runs ----------------------------------------------------------------------------------------------------
def test_multi_answer_rows_need_the_exact_set(repo: Path) -> None:
    exam = kaoshi.load_exam("agieval", repo, subjects=["jec-qa-kd"])
    replies = {"下列哪一机关": "答案：A", "关于合同": "答案：A"}
    result = kaoshi.evaluate(exam, lambda prompt: next(r for k, r in replies.items() if k in prompt))
    assert [(s.question_id, s.correct) for s in result.samples] == [
        ("jec-qa-kd/0", True),
        ("jec-qa-kd/1", False),
    ]
    assert result.samples[0].prompt.endswith("答案：从A到D, 我们应选择")


def test_end_to_end_with_the_random_baseline(
    capsys: pytest.CaptureFixture[str], repo_with_demos: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "runs.sqlite")
    cli(capsys, "run", "--benchmark", "agieval", "--data", str(repo_with_demos), "--model", "random",
        "--store", store)  # fmt: skip
    cli(capsys, "run", "--data", str(repo_with_demos), "--model", "random", "--method", "loglik",
        "--shots", "5", "--store", store)  # fmt: skip
    generated = cli_report(capsys, Path(store), "agieval-test-random-generate")
    assert generated["n"] == 7 and generated["errors"] == 0
    assert set(generated["groups"]["subject"]) == {
        "gaokao-physics",
        "gaokao-mathcloze",
        "logiqa-zh",
        "jec-qa-kd",
    }
    assert generated["groups"]["type"]["cloze"]["n"] == 2
    loglik = cli_report(capsys, Path(store), "agieval-test-random-loglik-5shot")
    assert loglik["n"] == 7
    [board] = json.loads(cli(capsys, "leaderboard", "--format", "json", "--store", store))
    assert board["benchmark"] == "agieval"
    assert board["columns"][6:] == [
        "gaokao-physics", "gaokao-mathcloze", "logiqa-zh", "jec-qa-kd", "Average", "accuracy"
    ]  # fmt: skip
    assert all(row[10].endswith("(4/12)") for row in board["rows"])  # the average covers 4 of 12 tasks
    assert {row[3] for row in board["rows"]} == {"agieval 0-shot · no chat", "agieval 5-shot · no chat"}
    plot = tmp_path / "by-task.png"
    cli(capsys, "plot", "agieval-test-random-generate", "agieval-test-random-loglik-5shot", "--by", "subject",
        "-o", str(plot), "--store", store)  # fmt: skip
    page = tmp_path / "report.html"
    cli(capsys, "html", "agieval-test-random-generate", "--by", "subject", "-o", str(page), "--store", store)
    assert plot.stat().st_size > 0 and "gaokao-mathcloze" in page.read_text(encoding="utf-8")


def test_listed_with_formats_sizes_and_licence() -> None:
    benchmark = get_benchmark("agieval")
    assert benchmark.splits == ("test",) and benchmark.default_prompt == "agieval"
    assert benchmark.size.startswith("4,723 in 12 tasks") and "JEC-QA academic use" in benchmark.licence
    assert benchmark.categories["jec-qa-ca"] == "JEC-QA" and len(benchmark.categories) == 12
