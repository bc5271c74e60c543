"""FinEval in its published layout (C-Eval's: {split}/{subject}_{split}.csv with id,question,A,B,C,D,answer,
explanation), on rows written here: read by the C-Eval reader with FinEval's subject table, C-Eval's header
with FinEval's subject names, the submission export, the leaderboard, and detection against C-Eval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kaoshi.benchmarks import detect_benchmark, get_benchmark, get_template, load_exam_result
from kaoshi.benchmarks.fineval.subjects import FINEVAL_CATEGORIES, FINEVAL_SUBJECTS
from kaoshi.cli.main import main
from kaoshi.data import DataError, Exam
from kaoshi.prompts import RenderOptions
from tests.support.files import CEVAL_HEADER, write_csv

DEV_ROWS = [
    ["0", "增值税属于____", "直接税", "间接税", "财产税", "行为税", "B", "增值税可以转嫁。"],
    ["1", "我国个人所得税采用____", "分类所得税制", "综合所得税制", "综合与分类相结合", "单一税制", "C",
     "2019年起综合与分类相结合。"],
]  # fmt: skip
VAL_ROWS = [
    ["0", "消费税的纳税环节主要是____", "生产环节", "批发环节", "零售环节", "进口环节", "A", ""],
    ["1", "企业所得税的基本税率是____", "15%", "20%", "25%", "30%", "C", ""],
]
TEST_ROWS = [["0", "关税的征税对象是____", "进出境货物", "国内货物", "劳务", "无形资产"]]
FINANCE_VAL = [
    ["0", "货币政策的最终目标不包括____", "稳定物价", "充分就业", "经济增长", "利润最大化", "D", ""]
]


def make_fineval(root: Path) -> Path:
    """Two subjects: tax_law (Accounting) with dev, val and test, and finance (Finance) with val."""
    write_csv(root / "dev" / "tax_law_dev.csv", CEVAL_HEADER, DEV_ROWS)
    write_csv(root / "val" / "tax_law_val.csv", CEVAL_HEADER, VAL_ROWS)
    write_csv(root / "test" / "tax_law_test.csv", CEVAL_HEADER[:6], TEST_ROWS)
    write_csv(root / "val" / "finance_val.csv", CEVAL_HEADER, FINANCE_VAL)
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_fineval(tmp_path / "FinEval")


def test_subject_table_facts() -> None:
    assert len(FINEVAL_SUBJECTS) == 34
    counts = {c: sum(s.category == c for s in FINEVAL_SUBJECTS.values()) for c in FINEVAL_CATEGORIES}
    assert counts == {"Finance": 10, "Economy": 7, "Accounting": 10, "Certificate": 7}
    assert FINEVAL_SUBJECTS["tax_law"] == ("Tax Law", "税法", "Accounting")
    assert FINEVAL_SUBJECTS["accounting"].chinese == "会计"
    assert get_benchmark("fineval").categories["china_actuary"] == "Certificate"


def test_val_split_with_dev_pool(root: Path) -> None:
    result = load_exam_result("fineval", root)
    exam = result.exam
    assert exam.name == "fineval" and exam.metadata["split"] == "val"
    # finance has no dev file here: its questions get no exemplars, and the load says so
    assert result.warnings == (f"{root / 'dev'}: no dev file, so no exemplars, for finance",)
    assert [q.id for q in exam.questions] == ["finance/0", "tax_law/0", "tax_law/1"]
    first = exam.question("tax_law/1")
    assert (first.category, first.split, first.answer) == ("Accounting", "val", frozenset("C"))
    assert exam.question("finance/0").category == "Finance"
    assert [q.explanation for q in exam.fewshot] == ["增值税可以转嫁。", "2019年起综合与分类相结合。"]


def test_test_split_and_one_file(root: Path) -> None:
    test = load_exam_result("fineval", root, "test").exam
    assert [(q.id, q.answer) for q in test.questions] == [("tax_law/0", None)]
    one = load_exam_result("fineval", root / "val" / "finance_val.csv").exam
    assert [q.id for q in one.questions] == ["finance/0"] and one.metadata["split"] == "val"
    with pytest.raises(DataError, match="this is a 'val' file, but split 'dev' was asked"):
        load_exam_result("fineval", root / "val" / "finance_val.csv", "dev")


def test_subject_filter(root: Path) -> None:
    assert {q.subject for q in load_exam_result("fineval", root, subjects=["finance"]).exam.questions} == {
        "finance"
    }
    with pytest.raises(DataError, match=r"no file for subject\(s\) tax_lw \(did you mean tax_law\?\)"):
        load_exam_result("fineval", root, subjects=["tax_lw"])


def test_bad_rows_name_file_line_and_field(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "val" / "insurance_val.csv",
        CEVAL_HEADER,
        [
            ["0", "保险的基本职能是____", "分散风险", "储蓄", "投资", "防灾", "A", ""],
            ["1", "坏答案____", "1", "2", "3", "4", "F", ""],
            ["2", "多一列", "1", "2", "3", "4", "A", "", "x"],
            CEVAL_HEADER,
            ["4", "无答案", "1", "2", "3", "4", "", ""],
        ],
    )
    with pytest.raises(DataError) as info:
        load_exam_result("fineval", tmp_path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3: field 'answer': answer 'F' is not one of A, B, C, D",
        f"{path}:4: row has more fields than the header",
        f"{path}:5: the header row is repeated here",
        f"{path}:6: field 'answer': missing answer (only the test split may omit it)",
    ]


def test_unknown_subject_is_a_warning(tmp_path: Path) -> None:
    write_csv(tmp_path / "val" / "fintech_val.csv", CEVAL_HEADER, [["0", "q", "1", "2", "3", "4", "A", ""]])
    path = tmp_path / "val" / "fintech_val.csv"
    assert load_exam_result("fineval", tmp_path).warnings == (
        f"{path}: 'fintech' is not a FinEval subject; loaded with no category",
    )


def test_no_data_says_to_pass_data() -> None:
    with pytest.raises(DataError, match="download it and pass --data PATH"):
        load_exam_result("fineval")


def test_detection_tells_fineval_from_ceval(root: Path, tmp_path: Path) -> None:
    assert detect_benchmark(root) == "fineval"
    assert detect_benchmark(root / "val" / "tax_law_val.csv") == "fineval"
    ceval = write_csv(
        tmp_path / "ceval" / "val" / "law_val.csv", CEVAL_HEADER, [["0", "q", "1", "2", "3", "4", "A", ""]]
    )
    assert detect_benchmark(ceval.parents[1]) == "ceval"
    assert detect_benchmark(ceval) == "ceval"
    # a folder holding both: whose subjects it has most of
    write_csv(tmp_path / "ceval" / "val" / "finance_val.csv", CEVAL_HEADER, FINANCE_VAL)
    assert detect_benchmark(ceval.parents[1]) == "ceval"  # a tie goes to C-Eval
    write_csv(tmp_path / "ceval" / "val" / "insurance_val.csv", CEVAL_HEADER, FINANCE_VAL)
    assert detect_benchmark(ceval.parents[1]) == "fineval"
    # a CSV named like C-Eval's without its columns is neither's
    other = tmp_path / "other_val.csv"
    other.write_text("a,b\n1,2\n", encoding="utf-8")
    assert (
        detect_benchmark(other) == "kaoshi"
    )  # kaoshi's own format takes any file, and then says what is wrong


# -- the prompt: C-Eval's rules with FinEval's subject names -------------------------------------------------
HEADER_TEXT = "以下是中国关于税法考试的单项选择题，请选出其中的正确答案。"


def body(row: list[str]) -> str:
    question, a, b, c, d = row[1:6]
    return question + "\nA. " + a + "\nB. " + b + "\nC. " + c + "\nD. " + d


@pytest.fixture
def exam(root: Path) -> Exam:
    return load_exam_result("fineval", root).exam


def render(exam: Exam, name: str, shots: int, **options: Any) -> Any:
    return get_template(name).render(exam.question("tax_law/0"), exam, RenderOptions(shots=shots, **options))


def test_answer_only_prompt_with_fineval_names(exam: Exam) -> None:
    assert get_benchmark("fineval").default_prompt == "fineval"
    assert render(exam, "fineval", 0).text == HEADER_TEXT + "\n\n" + body(VAL_ROWS[0]) + "\n答案："
    assert render(exam, "fineval", 5).text == (
        HEADER_TEXT + "\n\n"
        + body(DEV_ROWS[0]) + "\n答案：B\n\n"
        + body(DEV_ROWS[1]) + "\n答案：C\n\n"
        + body(VAL_ROWS[0]) + "\n答案："
    )  # fmt: skip
    # C-Eval's own template keeps C-Eval's table: a FinEval subject shows by its handle there
    assert render(exam, "ceval-answer-only", 0).text.startswith("以下是中国关于tax_law考试的单项选择题")


def test_cot_and_chat_prompts(exam: Exam) -> None:
    assert render(exam, "fineval-cot", 1).text == (
        HEADER_TEXT + "\n\n"
        + body(DEV_ROWS[0]) + "\n答案：让我们一步一步思考，\n增值税可以转嫁。\n所以答案是B。\n\n"
        + body(VAL_ROWS[0]) + "\n答案：让我们一步一步思考，\n1."
    )  # fmt: skip
    assert render(exam, "fineval", 1, chat=True).messages == (
        ("system", "你是一个中文人工智能助手，" + HEADER_TEXT),
        ("user", HEADER_TEXT + "\n\n" + body(DEV_ROWS[0]) + "\n答案："),
        ("assistant", "B"),
        ("user", body(VAL_ROWS[0]) + "\n答案："),
    )


# -- the leaderboard, the submission and the command line ----------------------------------------------------
def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    return out


def full_fineval(root: Path) -> Path:
    """Every subject: 2 val questions (gold A) and 3 test questions (no answers)."""
    for subject in FINEVAL_SUBJECTS:
        write_csv(
            root / "val" / f"{subject}_val.csv",
            CEVAL_HEADER,
            [[str(i), f"{subject}验证{i}", "1", "2", "3", "4", "A", ""] for i in range(2)],
        )
        write_csv(
            root / "test" / f"{subject}_test.csv",
            CEVAL_HEADER[:6],
            [[str(i), f"{subject}测试{i}", "1", "2", "3", "4"] for i in range(3)],
        )
    return root


def test_submission_export(capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path) -> None:
    root = full_fineval(tmp_path / "FinEval")
    store = str(store_path)
    ok(
        capsys,
        "run",
        "--data",
        str(root),
        "--split",
        "test",
        "--model",
        "constant:B",
        "--run-name",
        "t",
        "--store",
        store,
    )
    ok(capsys, "run", "--data", str(root), "--model", "constant:B", "--run-name", "v", "--store", store)
    out = tmp_path / "submission.json"
    code, _, err = cli(capsys, "export", "fineval-submission", "t", "-o", str(out), "--store", store)
    assert code == 0 and "34 subjects, 102 answers" in err
    document = json.loads(out.read_text(encoding="utf-8"))
    assert list(document) == list(FINEVAL_SUBJECTS)
    assert document["tax_law"] == {"0": "B", "1": "B", "2": "B"}
    code, _, err = cli(
        capsys, "export", "fineval-submission", "v", "-o", str(tmp_path / "x.json"), "--store", store
    )
    assert code == 2 and "the 'val' split; the submission needs --split test" in err
    code, _, err = cli(
        capsys, "export", "ceval-submission", "t", "-o", str(tmp_path / "x.json"), "--store", store
    )
    assert code == 2 and "a C-Eval submission needs a ceval run" in err
    some = ["run", "--data", str(root), "--split", "test", "--subjects", "tax_law", "--model", "constant:B"]
    ok(capsys, *some, "--run-name", "some", "--store", store)
    code, _, err = cli(
        capsys, "export", "fineval-submission", "some", "-o", str(tmp_path / "x.json"), "--store", store
    )
    assert code == 2 and "cannot make a complete FinEval submission" in err and "33 subject(s) missing" in err


def test_end_to_end_with_the_random_model(
    capsys: pytest.CaptureFixture[str], root: Path, tmp_path: Path, store_path: Path
) -> None:
    store = str(store_path)
    rnd = ["--model", "random", "--run-name", "rnd"]
    ok(capsys, "run", "--benchmark", "fineval", "--data", str(root), *rnd, "--store", store)
    ok(capsys, "run", "--data", str(root), "--model", "constant:C", "--run-name", "c", "--store", store)
    report: dict[str, Any] = json.loads(ok(capsys, "report", "rnd", "--format", "json", "--store", store))
    assert report["n"] == 3 and report["graded"] == 3
    [board] = json.loads(
        ok(capsys, "leaderboard", "--benchmark", "fineval", "--format", "json", "--store", store)
    )
    assert board["columns"][6:] == ["Finance", "Economy", "Accounting", "Certificate", "Average"]
    rows = {row[0]: row for row in board["rows"]}
    # constant C: finance 0/1, tax_law 1/2 -> Finance 0%, Accounting 50%, Average 25% over 2 of 34 subjects
    assert rows["c"][3] == "fineval 5-shot · no chat"
    assert rows["c"][6:] == ["0.0% (1/10)", "—", "50.0% (1/10)", "—", "25.0% (2/34)"]
    plot = tmp_path / "plot.png"
    ok(capsys, "plot", "rnd", "--by", "subject", "-o", str(plot), "--store", store)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = tmp_path / "report.html"
    ok(capsys, "html", "rnd", "c", "-o", str(page), "--store", store)
    assert "tax_law" in page.read_text(encoding="utf-8")
