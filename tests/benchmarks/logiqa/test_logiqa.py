"""LogiQA (Chinese): eight-line records written here in the published layout (our own questions), with
its quirks (lower-case answers, mixed option prefixes, CRLF), bad records, splits, detection, the prompt
and a run end to end with the random baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.benchmarks import detect, detect_benchmark, get_benchmark, get_template, load_exam_result
from kaoshi.data import DataError, QuestionType
from kaoshi.prompts import RenderOptions
from tests.support.runs import cli, cli_report

# Each record: blank line, answer, context, question, four options (prefixes 'A.', 'B．', 'C ', 'd.').
RECORDS = [
    [
        "",
        "b",
        "某单位有甲、乙、丙三人，其中只有一人会开车。甲说：“我会开车。”乙说：“甲不会开车。”已知三人中只有一人说了真话。",
        "由此可以推出：",
        "A.甲会开车",
        "B．乙会开车",
        "C 丙会开车",
        "D.无法确定谁会开车",
    ],
    [
        "",
        "c",
        "所有的图书管理员都喜欢读书，有些喜欢读书的人也喜欢跑步。",
        "以下哪项一定为真？",
        "A．所有喜欢跑步的人都是图书管理员",
        "B.有些图书管理员喜欢跑步",
        "C.喜欢读书的人中有图书管理员",
        "d.没有图书管理员喜欢跑步",
    ],
    [
        "",
        "a",
        "如果明天下雨，运动会就延期。运动会没有延期。",
        "由此可知：",
        "A 明天没有下雨",
        "B 明天下雨了",
        "C 运动会取消了",
        "D 运动会提前了",
    ],
]


def write_records(path: Path, records: list[list[str]], newline: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [line for record in records for line in record]
    path.write_bytes((newline.join(lines) + newline).encode())
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "LogiQA-dataset"
    write_records(root / "zh_test.txt", RECORDS, newline="\r\n")
    write_records(root / "zh_eval.txt", RECORDS[:2])
    write_records(root / "zh_train.txt", RECORDS[1:])
    return root


def test_a_folder_loads_the_test_split_with_the_train_split_as_pool(folder: Path) -> None:
    exam = load_exam_result("logiqa", folder).exam
    assert [q.id for q in exam.questions] == ["test/0", "test/1", "test/2"]
    first, second, third = exam.questions
    assert (first.type, first.answer, second.answer, third.answer) == (
        QuestionType.SINGLE,
        frozenset("B"),
        frozenset("C"),
        frozenset("A"),
    )
    assert first.stem == f"{RECORDS[0][2]}\n由此可以推出："  # the context is the passage before the question
    assert first.options == (
        ("A", "甲会开车"),
        ("B", "乙会开车"),
        ("C", "丙会开车"),
        ("D", "无法确定谁会开车"),
    )
    assert second.options[3] == ("D", "没有图书管理员喜欢跑步")  # 'd.' read as D
    assert [q.source.line for q in exam.questions if q.source] == [1, 9, 17]
    assert (first.split, first.subject, first.domain) == ("test", None, None)
    assert [q.id for q in exam.fewshot] == ["train/0", "train/1"]
    assert exam.metadata["split"] == "test"


def test_splits_and_single_files(folder: Path) -> None:
    assert [q.id for q in load_exam_result("logiqa", folder, "eval").exam.questions] == ["eval/0", "eval/1"]
    train = load_exam_result("logiqa", folder, "train").exam
    assert len(train.questions) == 2 and train.fewshot == ()
    one = load_exam_result("logiqa", folder / "zh_eval.txt").exam
    assert [q.id for q in one.questions] == ["eval/0", "eval/1"] and one.fewshot == ()
    assert load_exam_result("logiqa", folder / "zh_eval.txt", "eval").exam.metadata["split"] == "eval"
    with pytest.raises(DataError, match="is the eval split; --split test asks for another"):
        load_exam_result("logiqa", folder / "zh_eval.txt", "test")
    with pytest.raises(DataError, match="LogiQA splits are train, eval, test, got 'dev'"):
        load_exam_result("logiqa", folder, "dev")
    (folder / "zh_train.txt").unlink()
    with pytest.raises(DataError, match=r"no zh_train.txt \(a LogiQA folder has zh_train/eval/test.txt\)"):
        load_exam_result("logiqa", folder, "train")
    renamed = write_records(folder / "mine.txt", RECORDS[:1])
    assert [q.id for q in load_exam_result("logiqa", renamed).exam.questions] == ["test/0"]
    with pytest.raises(DataError, match="needs --data PATH"):
        load_exam_result("logiqa")


def test_a_file_without_the_leading_blank_line_or_with_extra_blank_lines(tmp_path: Path) -> None:
    path = write_records(tmp_path / "zh_test.txt", [RECORDS[0][1:], ["", "", *RECORDS[1][1:]]])
    exam = load_exam_result("logiqa", path).exam
    assert [(q.id, q.source.line if q.source else None) for q in exam.questions] == [
        ("test/0", 1),
        ("test/1", 9),
    ]


BAD = [
    (["", "e", *RECORDS[0][2:]], "field 'answer': answer 'e' is not one of a, b, c, d"),
    (["", "ab", *RECORDS[0][2:]], "field 'answer': answer 'ab' is not one of a, b, c, d"),
    (
        ["", "b", *RECORDS[0][2:5], "甲会开车", *RECORDS[0][6:]],
        "field 'option B': line 14 '甲会开车' does not start with 'B.', 'B．' or 'B '",
    ),
    (
        # Two lines print C: no reading by printed letter, so the line in B's place must print B.
        ["", "b", *RECORDS[0][2:5], "C.乙会开车", "C.丙会开车", RECORDS[0][7]],
        "field 'option B': line 14 'C.乙会开车' does not start with 'B.', 'B．' or 'B '",
    ),
    (["", "b", *RECORDS[0][2:5], "B.", *RECORDS[0][6:]], "field 'option B': line 14: option B is empty"),
    (["", "b", *RECORDS[0][2:4]], "a record has 7 lines after its blank line"),  # cut short at the end
]


@pytest.mark.parametrize(("record", "message"), BAD)
def test_bad_records_name_file_first_line_and_field(tmp_path: Path, record: list[str], message: str) -> None:
    path = write_records(tmp_path / "zh_test.txt", [RECORDS[0], record])
    with pytest.raises(DataError) as info:
        load_exam_result("logiqa", path)
    [error] = info.value.errors
    assert str(error).startswith(f"{path}:9: {message}")
    assert [q.id for q in load_exam_result("logiqa", path, on_invalid="skip").exam.questions] == ["test/0"]


def test_options_printed_out_of_order_are_read_by_their_printed_letter(tmp_path: Path) -> None:
    # The released zh_test.txt prints the options of 19 records A, C, B, D, and its answer key follows the
    # printed letters (our own question in that shape: only the line printed B is right).
    swapped = [
        "",
        "b",
        "甲比乙高，乙比丙高。",
        "由此可知：",
        "A. 丙最高。",
        "C．乙最高。",
        "B。甲最高。",
        "D. 三人一样高。",
    ]
    path = write_records(tmp_path / "zh_test.txt", [RECORDS[0], swapped, RECORDS[1], swapped])
    result = load_exam_result("logiqa", path)
    question = result.exam.questions[1]
    assert question.options == (
        ("A", "丙最高。"),
        ("B", "甲最高。"),
        ("C", "乙最高。"),
        ("D", "三人一样高。"),
    )
    assert question.answer == frozenset("B")
    assert result.warnings == (
        f"2 row(s) list their options out of letter order (read by the printed letters, as the answer key "
        f"is): {path}:9, {path}:25",
    )
    prompt = get_template("default").render(question, result.exam, RenderOptions(0)).text
    assert prompt.index("B. 甲最高。") < prompt.index("C. 乙最高。")


def test_a_record_missing_a_line_in_the_middle_does_not_shift_the_rest(tmp_path: Path) -> None:
    short = [line for number, line in enumerate(RECORDS[1]) if number != 3]  # no question line
    path = write_records(tmp_path / "zh_test.txt", [RECORDS[0], short, RECORDS[2]])
    result = load_exam_result("logiqa", path, on_invalid="skip")
    assert [q.id for q in result.exam.questions] == ["test/0", "test/2"]
    [error] = result.errors
    assert str(error) == (
        f"{path}:9: a record has 7 lines after its blank line (answer, context, question, four options); "
        "this one has 6 (lines 10-15)"
    )


def test_detection(folder: Path, tmp_path: Path) -> None:
    assert detect_benchmark(folder / "zh_test.txt") == "logiqa"
    assert detect_benchmark(folder / "zh_train.txt") == "logiqa"
    other = tmp_path / "notes.txt"
    other.write_text("anything\n", encoding="utf-8")
    assert detect_benchmark(other) == "kaoshi"
    almost = write_records(tmp_path / "almost.txt", [["", "x", *RECORDS[0][2:]]])  # not an answer letter
    assert detect(almost) != "logiqa"
    jsonl = tmp_path / "zh_test.jsonl"
    jsonl.write_text(
        json.dumps({"id": "1", "type": "judge", "question": "q", "answer": True}), encoding="utf-8"
    )
    assert detect(jsonl) != "logiqa"
    assert detect_benchmark(folder) == "logiqa"
    (tmp_path / "empty").mkdir()
    assert detect(tmp_path / "empty") != "logiqa"


def test_default_prompt_is_kaoshis_own(folder: Path) -> None:
    benchmark = get_benchmark("logiqa")
    assert benchmark.default_prompt == "default"
    exam = load_exam_result("logiqa", folder).exam
    prompt = get_template("default").render(exam.questions[0], exam, RenderOptions(0))
    assert prompt.text == (
        "以下是单项选择题，请选出唯一正确的选项。\n\n"
        f"{RECORDS[0][2]}\n由此可以推出：\n"
        "A. 甲会开车\nB. 乙会开车\nC. 丙会开车\nD. 无法确定谁会开车\n答案："
    )
    shot = get_template("default").render(exam.questions[0], exam, RenderOptions(1)).text
    assert (
        f"{RECORDS[1][2]}\n以下哪项一定为真？\n" in shot and "\n答案：C\n\n" in shot
    )  # from the train split


def test_end_to_end_with_the_random_baseline(
    capsys: pytest.CaptureFixture[str], folder: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "runs.sqlite")
    cli(capsys, "run", "--benchmark", "logiqa", "--data", str(folder), "--model", "random", "--store", store)
    cli(capsys, "run", "--data", str(folder / "zh_test.txt"), "--model", "random", "--method", "loglik",
        "--store", store)  # fmt: skip
    report = cli_report(capsys, Path(store), "logiqa-test-random-generate")
    assert (report["n"], report["errors"], report["unparsed"]) == (3, 0, 0)
    [board] = json.loads(cli(capsys, "leaderboard", "--format", "json", "--store", store))
    assert board["benchmark"] == "logiqa" and board["columns"][6:] == ["accuracy"]
    assert len(board["rows"]) == 2
    plot, page = tmp_path / "plot.png", tmp_path / "report.html"
    cli(capsys, "plot", "logiqa-test-random-generate", "logiqa-test-random-loglik", "--by", "type",
        "-o", str(plot), "--store", store)  # fmt: skip
    cli(capsys, "html", "logiqa-test-random-generate", "--by", "type", "-o", str(page), "--store", store)
    assert plot.stat().st_size > 0 and "由此可以推出" in page.read_text(encoding="utf-8")


def test_listed_with_formats_sizes_and_licence() -> None:
    benchmark = get_benchmark("logiqa")
    assert benchmark.splits == ("train", "eval", "test")
    assert benchmark.size == "8,678: 7,376 train + 651 eval + 651 test"
    assert "CC BY-NC-SA" in benchmark.licence and benchmark.hub_id is None
