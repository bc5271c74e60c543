"""CMMLU in its published layout (data/{dev,test}/{subject}.csv, header `,Question,A,B,C,D,Answer`, the first
column pandas' unnamed row index), on rows written here; its official prompt byte for byte (expected
strings written out from src/mp_utils.py's rules); its leaderboard, where a China-specific subject counts
in two columns."""

from __future__ import annotations

import csv
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaoshi.benchmarks import detect_benchmark, get_benchmark, get_template, load_exam_result
from kaoshi.benchmarks.cmmlu.subjects import CHINA_SPECIFIC, CMMLU_CATEGORIES, CMMLU_SUBJECTS
from kaoshi.cli.main import main
from kaoshi.data import DataError, Exam
from kaoshi.prompts import Fits, Prompt, RenderOptions, render_fitting
from kaoshi.results.aggregate import RunSummary
from kaoshi.results.tally import Tally

HEADER = ["", "Question", "A", "B", "C", "D", "Answer"]
HEADER_LINE = ",Question,A,B,C,D,Answer"

# Five dev rows for chinese_history plus a sixth, which five shots leave out; a leading space and a line
# break in some cells show the cells are used as read.
HISTORY_DEV = [
    ["0", "秦朝统一文字后通行的字体是", "小篆", "隶书", " 楷书", "行书", "A"],
    ["1", "“贞观之治”出现在哪个朝代？", "汉", "唐", "宋", "明", "B"],
    ["2", "郑和下西洋始于哪位皇帝在位时？", "洪武", "建文", "永乐", "宣德", "C"],
    ["3", "科举制度创立于", "秦", "汉", "魏", "隋", "D"],
    ["4", "《史记》的作者是\n（单选）", "班固", "司马迁", "司马光", "陈寿", "B"],
    ["5", "第六道例题", "甲", "乙", "丙", "丁", "A"],
]
HISTORY_TEST = [
    ["0", "丝绸之路开通于哪个朝代？", "西汉", "东汉", "唐", "元", "A"],
    ["1", "鸦片战争爆发于哪一年？", "1839", "1840", "1842", "1856", "B"],
]
AGRONOMY_DEV = [["0", "水稻属于哪一类作物？", "粮食作物", "油料作物", "纤维作物", "糖料作物", "A"]]
AGRONOMY_TEST = [
    ["0", "小麦的主要收获部位是", "根", "茎", "叶", "籽粒", "D"],
    ["1", "下列属于豆科作物的是", "玉米", "大豆", "棉花", "甘蔗", "B"],
    ["2", "土壤酸碱度常用什么表示？", "pH", "EC", "CEC", "OM", "A"],
]


def write_cmmlu_csv(
    path: Path, rows: list[list[str]], *, header: list[str] = HEADER, bom: bool = False, crlf: bool = False
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\r\n" if crlf else "\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def make_cmmlu(root: Path) -> Path:
    """A CMMLU repo: README and data/{dev,test}/ for two subjects."""
    (root / "README.md").parent.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# CMMLU\n", encoding="utf-8")
    write_cmmlu_csv(root / "data" / "dev" / "chinese_history.csv", HISTORY_DEV)
    write_cmmlu_csv(root / "data" / "dev" / "agronomy.csv", AGRONOMY_DEV)
    write_cmmlu_csv(root / "data" / "test" / "chinese_history.csv", HISTORY_TEST)
    write_cmmlu_csv(root / "data" / "test" / "agronomy.csv", AGRONOMY_TEST)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_cmmlu(tmp_path / "CMMLU")


def test_subject_table_facts() -> None:
    assert len(CMMLU_SUBJECTS) == 67
    counts = {c: sum(s.category == c for s in CMMLU_SUBJECTS.values()) for c in CMMLU_CATEGORIES}
    assert counts == {"STEM": 17, "Humanities": 13, "Social Science": 22, "Other": 15}
    china = sorted(name for name, s in CMMLU_SUBJECTS.items() if s.china_specific)
    assert len(china) == 15 and "chinese_history" in china and "traditional_chinese_medicine" in china
    assert CMMLU_SUBJECTS["chinese_history"] == ("中国历史", "Humanities", True)
    assert CMMLU_SUBJECTS["high_school_physics"].chinese == "高中物理学"
    assert get_benchmark("cmmlu").categories["ancient_chinese"] == "Social Science"


@pytest.mark.parametrize("where", ["root", "data"])
def test_test_split_with_dev_pool(repo: Path, where: str) -> None:
    data = repo if where == "root" else repo / "data"
    result = load_exam_result("cmmlu", data)
    exam = result.exam
    assert result.warnings == ()
    assert exam.name == "cmmlu" and exam.metadata["split"] == "test"
    assert [q.id for q in exam.questions] == [
        "agronomy/0", "agronomy/1", "agronomy/2", "chinese_history/0", "chinese_history/1",
    ]  # fmt: skip
    first = exam.questions[0]
    assert (first.subject, first.category, first.split) == ("agronomy", "Other", "test")
    assert first.options == (("A", "根"), ("B", "茎"), ("C", "叶"), ("D", "籽粒"))
    assert first.answer == frozenset("D")
    assert first.source is not None and first.source.line == 2
    assert len(exam.fewshot) == 7 and {q.split for q in exam.fewshot} == {"dev"}


def test_one_subject_file(repo: Path) -> None:
    test_file = repo / "data" / "test" / "chinese_history.csv"
    exam = load_exam_result("cmmlu", test_file).exam
    assert [q.id for q in exam.questions] == ["chinese_history/0", "chinese_history/1"]
    assert [q.id for q in exam.fewshot] == [f"chinese_history/{i}" for i in range(6)]  # its dev file only
    dev = load_exam_result("cmmlu", repo / "data" / "dev" / "agronomy.csv").exam
    assert [(q.id, q.split) for q in dev.questions] == [("agronomy/0", "dev")] and dev.fewshot == ()
    with pytest.raises(DataError, match="in the 'dev' folder, but split 'test' was asked"):
        load_exam_result("cmmlu", repo / "data" / "dev" / "agronomy.csv", "test")


def test_split_and_subject_filters(repo: Path) -> None:
    dev = load_exam_result("cmmlu", repo, "dev").exam
    assert len(dev) == 7 and dev.fewshot == ()
    some = load_exam_result("cmmlu", repo, subjects=["agronomy"]).exam
    assert {q.subject for q in (*some.questions, *some.fewshot)} == {"agronomy"}
    with pytest.raises(DataError) as caught:
        load_exam_result("cmmlu", repo, subjects=["agronomyy"])
    assert (
        "no file for subject(s) agronomyy (did you mean agronomy?); subjects here: agronomy, chinese_history"
        in str(caught.value)
    )
    with pytest.raises(DataError, match="CMMLU split must be one of dev, test, got 'val'"):
        load_exam_result("cmmlu", repo, "val")


def test_bom_crlf_and_a_quoted_line_break(tmp_path: Path) -> None:
    path = write_cmmlu_csv(
        tmp_path / "test" / "arts.csv",
        [
            ["0", "京剧的四大行当是\n生旦净丑吗？", "是", "否", "不确定", "都不对", "A"],
            ["1", "二题", "1", "2", "3", "4", "C"],
        ],
        bom=True,
        crlf=True,
    )
    assert path.read_bytes().startswith(b"\xef\xbb\xbf," + b"Question")
    assert b"\r\n" in path.read_bytes()
    exam = load_exam_result("cmmlu", tmp_path).exam
    first, second = exam.questions
    assert first.id == "arts/0" and first.stem == "京剧的四大行当是\n生旦净丑吗？"
    assert first.category == "Humanities"
    assert second.source is not None and second.source.line == 4  # the quoted break took a line


def test_a_file_without_the_index_column_numbers_its_rows(tmp_path: Path) -> None:
    write_cmmlu_csv(
        tmp_path / "test" / "virology.csv",
        [
            ["病毒的遗传物质是", "DNA或RNA", "蛋白质", "脂质", "糖类", "A"],
            ["流感病毒属于", "RNA病毒", "DNA病毒", "朊病毒", "类病毒", "A"],
        ],
        header=HEADER[1:],
    )
    assert [q.id for q in load_exam_result("cmmlu", tmp_path).exam.questions] == ["virology/0", "virology/1"]


def test_bad_rows(tmp_path: Path) -> None:
    path = write_cmmlu_csv(
        tmp_path / "data" / "test" / "anatomy.csv",
        [
            ["0", "人体最大的器官是", "皮肤", "肝", "肺", "心", "A"],
            ["1", "多一列", "a", "b", "c", "d", "A", "extra"],
            ["2", "少一列", "a", "b", "c", "d"],
            ["3", "坏答案", "a", "b", "c", "d", "E"],
            ["4", "", "a", "b", "c", "d", "B"],
            HEADER,
            ["", "无序号", "a", "b", "c", "d", "C"],
            ["0", "重复序号", "a", "b", "c", "d", "D"],
            ["8", "缺选项", "a", "", "c", "d", "D"],
            ["9", "无答案", "a", "b", "c", "d", ""],
        ],
    )
    with pytest.raises(DataError) as info:
        load_exam_result("cmmlu", tmp_path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:3: row has more fields than the header",
        f"{path}:4: row has 6 field(s), the header 7",
        f"{path}:5: field 'Answer': answer 'E' is not one of A, B, C, D",
        f"{path}:6: field 'Question': is empty",
        f"{path}:7: the header row is repeated here",
        f"{path}:8: field '(row index)': the first column (the row index, the question's id) is empty",
        f"{path}:9: field 'id': duplicate id 'anatomy/0' (first seen at line 2)",
        f"{path}:10: field 'B': is empty",
        f"{path}:11: field 'Answer': missing answer",
    ]
    skipped = load_exam_result("cmmlu", tmp_path, on_invalid="skip")
    assert [q.id for q in skipped.exam.questions] == ["anatomy/0"] and len(skipped.errors) == 9


def test_missing_columns_and_folders(tmp_path: Path) -> None:
    path = write_cmmlu_csv(
        tmp_path / "test" / "anatomy.csv", [["0", "q", "a", "b"]], header=["", "Question", "A", "B"]
    )
    with pytest.raises(DataError) as info:
        load_exam_result("cmmlu", tmp_path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:1: field 'C': missing column(s) C, D, Answer in the header"
    ]
    with pytest.raises(DataError, match="no 'dev' folder"):
        load_exam_result("cmmlu", tmp_path, "dev")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no CMMLU data here"):
        load_exam_result("cmmlu", empty)


def test_unknown_subject_is_a_warning(tmp_path: Path) -> None:
    write_cmmlu_csv(tmp_path / "test" / "my_subject.csv", [["0", "q", "1", "2", "3", "4", "A"]])
    result = load_exam_result("cmmlu", tmp_path)
    assert result.exam.questions[0].category is None
    path = tmp_path / "test" / "my_subject.csv"
    assert result.warnings == (f"{path}: 'my_subject' is not a CMMLU subject; loaded with no category",)


def test_no_data_is_one_clear_line() -> None:
    with pytest.raises(DataError) as info:
        load_exam_result("cmmlu")
    message = str(info.value)
    assert "\n" not in message and message.startswith(
        "haonan-li/cmmlu on the Hugging Face hub is a loading script"
    )
    assert message.endswith("pass --data PATH")


def test_detection(repo: Path, tmp_path: Path) -> None:
    assert detect_benchmark(repo) == "cmmlu"
    assert detect_benchmark(repo / "data") == "cmmlu"
    assert detect_benchmark(repo / "data" / "test" / "agronomy.csv") == "cmmlu"
    # a folder of files with CMMLU's header but names of one's own
    write_cmmlu_csv(tmp_path / "mine" / "test" / "my_subject.csv", [["0", "q", "1", "2", "3", "4", "A"]])
    assert detect_benchmark(tmp_path / "mine") == "cmmlu"
    # a C-Eval folder is not CMMLU's
    ceval = tmp_path / "ceval" / "val" / "law_val.csv"
    ceval.parent.mkdir(parents=True)
    ceval.write_text("id,question,A,B,C,D,answer,explanation\n0,q,1,2,3,4,A,\n", encoding="utf-8")
    assert detect_benchmark(tmp_path / "ceval") == "ceval"


# -- the official prompt, written out from src/mp_utils.py -------------------------------------------------
HEADER_TEXT = "以下是关于中国历史的单项选择题，请直接给出正确答案的选项。\n\n"
COT_HEADER_TEXT = "以下是关于中国历史的单项选择题，请分析并选出正确答案。\n\n"


def item(row: list[str]) -> str:
    question, a, b, c, d = row[1:6]
    return "题目：" + question + "\nA. " + a + "\nB. " + b + "\nC. " + c + "\nD. " + d


def solved(row: list[str]) -> str:
    return item(row) + "\n答案是：" + row[6] + "\n\n"


@pytest.fixture
def exam(repo: Path) -> Exam:
    return load_exam_result("cmmlu", repo).exam


def render(exam: Exam, name: str, shots: int, **options: Any) -> Any:
    question = exam.question("chinese_history/0")
    return get_template(name).render(question, exam, RenderOptions(shots=shots, **options))


def test_zero_shot_prompt(exam: Exam) -> None:
    assert render(exam, "cmmlu", 0).text == (
        "以下是关于中国历史的单项选择题，请直接给出正确答案的选项。\n\n"
        "题目：丝绸之路开通于哪个朝代？\nA. 西汉\nB. 东汉\nC. 唐\nD. 元\n答案是："
    )


def test_five_shot_prompt_takes_the_first_five_dev_rows_of_the_subject(exam: Exam) -> None:
    prompt = render(exam, "cmmlu", 5)
    assert prompt.shots == 5
    expected = (
        HEADER_TEXT + "".join(solved(row) for row in HISTORY_DEV[:5]) + item(HISTORY_TEST[0]) + "\n答案是："
    )
    assert prompt.text == expected
    assert " 楷书" in prompt.text and "《史记》的作者是\n（单选）" in prompt.text  # cells as read


def test_cot_prompt(exam: Exam) -> None:
    assert render(exam, "cmmlu-cot", 0).text == (
        COT_HEADER_TEXT + item(HISTORY_TEST[0]) + "\n逐步分析并给出答案选项。"
    )
    one = render(exam, "cmmlu-cot", 1).text
    assert (
        one == COT_HEADER_TEXT + solved(HISTORY_DEV[0]) + item(HISTORY_TEST[0]) + "\n逐步分析并给出答案选项。"
    )


def test_chat_prompt_is_the_same_text_as_one_user_message(exam: Exam) -> None:
    chat = render(exam, "cmmlu", 2, chat=True)
    text = (
        HEADER_TEXT + solved(HISTORY_DEV[0]) + solved(HISTORY_DEV[1]) + item(HISTORY_TEST[0]) + "\n答案是："
    )
    assert chat.messages == (("user", text),)
    with_system = render(exam, "cmmlu", 0, chat=True, system="你是考生。")
    assert with_system.messages[0] == ("system", "你是考生。")
    assert render(exam, "cmmlu", 0, system="你是考生。").text.startswith("你是考生。\n以下是关于中国历史")


# Exemplars of unequal length: the second is the longest, the third and fourth tie (the same length), then
# the first, then the last.
UNEVEN_DEV = [
    ["0", "水稻属于", "粮食", "油料", "纤维", "糖料", "A"],
    [
        "1",
        "下列关于土壤有机质作用的说法中，哪一项最能说明它对团粒结构的贡献？",
        "增加养分",
        "促进团粒形成",
        "降低地温",
        "提高酸度",
        "B",
    ],
    ["2", "玉米属于哪一科？", "禾本科", "豆科", "茄科", "十字花科", "A"],
    ["3", "大豆属于哪一科？", "禾本科", "豆科", "茄科", "十字花科", "B"],
    ["4", "小麦是", "粮", "油", "麻", "糖", "A"],
]


def test_too_long_a_prompt_loses_the_longest_exemplars_first(tmp_path: Path) -> None:
    # gen_prompt drops the longest exemplars while the prompt is too long, every exemplar of that length
    # at once (not the last ones, as kaoshi did before).
    write_cmmlu_csv(tmp_path / "data" / "dev" / "agronomy.csv", UNEVEN_DEV)
    write_cmmlu_csv(tmp_path / "data" / "test" / "agronomy.csv", AGRONOMY_TEST)
    exam = load_exam_result("cmmlu", tmp_path).exam
    question = exam.question("agronomy/0")
    header = "以下是关于农学的单项选择题，请直接给出正确答案的选项。\n\n"

    def prompt_of(kept: list[int]) -> str:
        return header + "".join(solved(UNEVEN_DEV[i]) for i in kept) + item(AGRONOMY_TEST[0]) + "\n答案是："

    def text(prompt: Prompt) -> str:
        return prompt.messages[0][1] if prompt.messages else prompt.text

    def shorter_than(limit: int) -> Fits:
        return lambda prompt: len(text(prompt)) < limit

    template = get_template("cmmlu")
    assert template.render(question, exam, RenderOptions(5)).text == prompt_of([0, 1, 2, 3, 4])
    for limit, kept in (
        (len(prompt_of([0, 2, 3, 4])) + 1, [0, 2, 3, 4]),  # the longest goes, though it is not the last
        (len(prompt_of([0, 4])) + 1, [0, 4]),  # then the two of the same length together
        (len(prompt_of([])), []),  # too long even without exemplars: the zero-shot prompt
    ):
        for chat in (False, True):
            options = RenderOptions(5, chat=chat)
            prompt = render_fitting(template, question, exam, options, shorter_than(limit))
            assert prompt.shots == len(kept)
            assert text(prompt) == prompt_of(kept)


def test_prompt_defaults() -> None:
    template = get_template("cmmlu")
    assert get_benchmark("cmmlu").default_prompt == "cmmlu"
    assert template.default_shots == 5
    assert template.answer_end(chat=False) == template.answer_end(chat=True) == "\n\n"


# -- the leaderboard -----------------------------------------------------------------------------------------
def tally(correct: int, graded: int) -> Tally:
    return Tally(n=graded, graded=graded, correct=correct)


def test_layout_counts_a_china_specific_subject_in_two_columns() -> None:
    layout = get_benchmark("cmmlu").leaderboard
    summary = RunSummary(
        "r",
        tally(10, 16),
        {
            "subject": {
                "anatomy": tally(1, 4),  # STEM 25%
                "chinese_history": tally(2, 4),  # Humanities and China-specific 50%
                "ancient_chinese": tally(4, 4),  # Social Science and China-specific 100%
                "agronomy": tally(3, 4),  # Other 75%
                "virology": Tally(n=2, ungraded=2),  # nothing graded: left out
            }
        },
    )
    assert layout.columns([summary]) == [
        "STEM",
        "Humanities",
        "Social Science",
        "Other",
        CHINA_SPECIFIC,
        "Average",
    ]
    assert layout.headline == "Average"
    assert layout.values(summary) == {
        "STEM": 0.25,
        "Humanities": 0.5,
        "Social Science": 1.0,
        "Other": 0.75,
        CHINA_SPECIFIC: 0.75,  # (50% + 100%) / 2
        "Average": 0.625,  # (25% + 50% + 100% + 75%) / 4 subjects
    }
    assert layout.coverage(summary) == {
        "STEM": (1, 17),
        "Humanities": (1, 13),
        "Social Science": (1, 22),
        "Other": (1, 15),
        CHINA_SPECIFIC: (2, 15),
        "Average": (4, 67),
    }


# -- end to end ----------------------------------------------------------------------------------------------
def cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_end_to_end_with_the_random_model(
    capsys: pytest.CaptureFixture[str], repo: Path, tmp_path: Path, store_path: Path
) -> None:
    store = str(store_path)
    cli(capsys, "run", "--data", str(repo), "--model", "random", "--run-name", "rnd", "--store", store)
    constant = ["--model", "constant:A", "--run-name", "a"]
    cli(capsys, "run", "--benchmark", "cmmlu", "--data", str(repo), *constant, "--store", store)
    report: dict[str, Any] = json.loads(cli(capsys, "report", "rnd", "--format", "json", "--store", store))
    assert report["n"] == 5 and report["graded"] == 5
    assert set(report["groups"]["subject"]) == {"agronomy", "chinese_history"}
    [board] = json.loads(
        cli(capsys, "leaderboard", "--benchmark", "cmmlu", "--format", "json", "--store", store)
    )
    assert board["columns"][6:] == [
        "STEM",
        "Humanities",
        "Social Science",
        "Other",
        CHINA_SPECIFIC,
        "Average",
    ]
    rows = {row[0]: row for row in board["rows"]}
    assert rows["a"][3] == "cmmlu 5-shot · no chat" and rows["a"][4] == "test"
    # constant A: agronomy 1/3, chinese_history 1/2; China-specific is chinese_history alone
    stem, humanities, social, other, china, average = rows["a"][6:]
    assert (stem, social) == ("—", "—")
    assert humanities == "50.0% (1/13)" and china == "50.0% (1/15)" and other == "33.3% (1/15)"
    assert average == "41.7% (2/67)"
    assert "China-specific subject also counts in its own category" in cli(
        capsys, "leaderboard", "--benchmark", "cmmlu", "--store", store
    )
    plot = tmp_path / "plot.png"
    cli(capsys, "plot", "rnd", "--by", "subject", "-o", str(plot), "--store", store)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = tmp_path / "report.html"
    cli(capsys, "html", "rnd", "a", "-o", str(page), "--store", store)
    assert "chinese_history" in page.read_text(encoding="utf-8")


# -- arbitrary bytes never crash -----------------------------------------------------------------------------
GOOD_FILE = (HEADER_LINE + "\n" + "0,题一,甲,乙,丙,丁,A\n1,题二,1,2,3,4,D\n").encode()
TOKENS = [
    b",",
    b"\n",
    b'"',
    b"\r",
    b"\xef\xbb\xbf",
    b"\xff",
    b"E",
    b",Question,A,B,C,D,Answer\n",
    b"",
    b"\x00",
]


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.sampled_from(TOKENS)), min_size=1, max_size=4)
)
def test_mangled_files_load_or_fail_with_a_clear_error(mutations: list[tuple[float, int, bytes]]) -> None:
    data = GOOD_FILE
    for where, cut, token in mutations:
        at = int(where * len(data))
        data = data[:at] + token + data[at + cut :]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "test" / "agronomy.csv"
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            result = load_exam_result("cmmlu", folder, on_invalid="skip")
        except DataError as exc:
            assert folder in str(exc)
        else:
            assert all(q.subject == "agronomy" and q.answer for q in result.exam.questions)
