"""M3KE in its published layout (data/{dev,test}/{Subject}-{Cluster}-{Level}.jsonl with id, question, A-D,
answer; test answers ""; subject_cluster.mapping.json and a UTF-16 README.md at the repo root), on rows
written here: clusters, withheld labels (answered, not graded, exported), errors, the leaderboard."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaoshi.benchmarks import detect_benchmark, get_benchmark, load_exam_result
from kaoshi.benchmarks.m3ke.tasks import M3KE_CLUSTERS, M3KE_TASKS
from kaoshi.cli.main import main
from kaoshi.data import DataError
from tests.support.files import write_jsonl

ECONOMICS = "Economics-Other-College"
PHYSICS = "Physics-Natural Sciences-High schoo"  # the published file name, cut short
CHINESE = "Chinese-Arts & Humanities-Primary school"


def row(i: int, question: str, options: tuple[str, str, str, str], answer: str) -> dict[str, Any]:
    a, b, c, d = options
    return {"id": i, "question": question, "A": a, "B": b, "C": c, "D": d, "answer": answer}


DEV = {
    ECONOMICS: [
        row(0, "需求曲线通常向哪个方向倾斜？", ("右下方", "右上方", "水平", "垂直"), "A"),
        row(1, "机会成本是指", ("会计成本", "放弃的最佳选择的价值", "沉没成本", "固定成本"), "B"),
    ],
    PHYSICS: [
        row(0, "光在真空中的速度约为", ("3×10^8 m/s", "3×10^5 m/s", "340 m/s", "1500 m/s"), "A"),
        row(1, "牛顿第一定律又称", ("惯性定律", "加速度定律", "作用力定律", "万有引力定律"), "A"),
    ],
    CHINESE: [
        row(0, "“春眠不觉晓”的下一句是", ("处处闻啼鸟", "夜来风雨声", "花落知多少", "举头望明月"), "A")
    ],
}
TEST = {
    ECONOMICS: [
        row(0, "通货膨胀是指", ("物价总水平持续上涨", "个别商品涨价", "工资上涨", "汇率上升"), ""),
        row(1, "GDP衡量的是", ("最终产品价值", "中间产品价值", "出口总额", "财政收入"), ""),
    ],
    PHYSICS: [row(0, "电流的单位是", ("伏特", "安培", "欧姆", "瓦特"), "")],
}
MAPPING = {
    "Arts & Humanities": [CHINESE],
    "Social Sciences": [],
    "Natural Sciences": [PHYSICS],
    "Others": [ECONOMICS],
}


def make_m3ke(root: Path, *, mapping: dict[str, list[str]] | None = MAPPING) -> Path:
    """An M3KE repo: a UTF-16 README.md, the cluster mapping, data/dev and data/test."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# M3KE\n一个中文评测基准\n", encoding="utf-16")
    if mapping is not None:
        (root / "subject_cluster.mapping.json").write_text(json.dumps(mapping, ensure_ascii=False, indent=4))
    for split, tasks in (("dev", DEV), ("test", TEST)):
        (root / "data" / split).mkdir(parents=True, exist_ok=True)
        for task, rows in tasks.items():
            write_jsonl(root / "data" / split / f"{task}.jsonl", rows)
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_m3ke(tmp_path / "M3KE")


def test_task_table_facts() -> None:
    assert len(M3KE_TASKS) == 71
    counts = {c: sum(cluster == c for cluster in M3KE_TASKS.values()) for c in M3KE_CLUSTERS}
    assert counts == {"Arts & Humanities": 12, "Social Sciences": 21, "Natural Sciences": 31, "Others": 7}
    assert M3KE_TASKS[ECONOMICS] == "Others" and M3KE_TASKS[PHYSICS] == "Natural Sciences"


def test_the_readme_is_utf16(repo: Path) -> None:
    assert (repo / "README.md").read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")


def test_dev_split_is_the_default_and_is_scored(repo: Path) -> None:
    result = load_exam_result("m3ke", repo)
    exam = result.exam
    assert result.warnings == () and exam.name == "m3ke" and exam.metadata["split"] == "dev"
    assert [q.id for q in exam.questions] == [
        f"{CHINESE}/0", f"{ECONOMICS}/0", f"{ECONOMICS}/1", f"{PHYSICS}/0", f"{PHYSICS}/1",
    ]  # fmt: skip
    q = exam.question(f"{ECONOMICS}/1")
    assert (q.subject, q.category, q.group, q.split) == (ECONOMICS, "Others", "College", "dev")
    assert q.options[1] == ("B", "放弃的最佳选择的价值") and q.answer == frozenset("B")
    assert q.source is not None and q.source.line == 2
    assert exam.question(f"{PHYSICS}/0").group == "High school"  # the cut-short level, as the others write it
    assert exam.fewshot == ()


def test_test_split_has_withheld_labels(repo: Path) -> None:
    result = load_exam_result("m3ke", repo / "data", "test")
    exam = result.exam
    assert [q.id for q in exam.questions] == [f"{ECONOMICS}/0", f"{ECONOMICS}/1", f"{PHYSICS}/0"]
    assert all(q.answer is None for q in exam.questions)
    assert {q.subject for q in exam.fewshot} == {ECONOMICS, PHYSICS}  # the dev of the evaluated tasks
    assert result.warnings == (
        "M3KE's test labels are withheld: 3 question(s) have no answer, so they are answered but not graded "
        "(kaoshi export m3ke-answers writes the answers); --split dev is scored",
    )


def test_clusters_come_from_the_mapping_else_the_file_name(tmp_path: Path) -> None:
    # The mapping wins where it lists a task (here it files Economics elsewhere than its name says).
    moved = {"Social Sciences": [ECONOMICS]}
    exam = load_exam_result("m3ke", make_m3ke(tmp_path / "a", mapping=moved)).exam
    assert exam.question(f"{ECONOMICS}/0").category == "Social Sciences"
    assert exam.question(f"{PHYSICS}/0").category == "Natural Sciences"  # not listed: the file name's
    # Without a mapping, the file name's cluster ('Other' is the mapping's 'Others').
    bare = load_exam_result("m3ke", make_m3ke(tmp_path / "b", mapping=None)).exam
    assert {q.subject: q.category for q in bare.questions} == {
        CHINESE: "Arts & Humanities", ECONOMICS: "Others", PHYSICS: "Natural Sciences",
    }  # fmt: skip


def test_one_task_file_and_filters(repo: Path) -> None:
    one = load_exam_result("m3ke", repo / "data" / "test" / f"{ECONOMICS}.jsonl").exam
    assert [q.id for q in one.questions] == [f"{ECONOMICS}/0", f"{ECONOMICS}/1"]
    assert one.metadata["split"] == "test" and [q.id for q in one.fewshot] == [
        f"{ECONOMICS}/0",
        f"{ECONOMICS}/1",
    ]
    assert one.question(f"{ECONOMICS}/0").category == "Others"  # the repo's mapping, found from the file
    some = load_exam_result("m3ke", repo, subjects=[PHYSICS]).exam
    assert {q.subject for q in some.questions} == {PHYSICS}
    with pytest.raises(DataError, match=r"no file for subject\(s\) Economics-Other-Colege \(did you mean"):
        load_exam_result("m3ke", repo, subjects=["Economics-Other-Colege"])
    with pytest.raises(DataError, match="M3KE split must be one of dev, test, got 'val'"):
        load_exam_result("m3ke", repo, "val")


MANAGEMENT = "Management-Other-College"  # the dev file's and the mapping's name
MANAGEMENT_TEST_FILE = "Management-Natural Sciences-College"  # the published test file's name


def test_the_management_test_file_is_the_management_task(tmp_path: Path, store_path: Path) -> None:
    root = make_m3ke(tmp_path / "M3KE", mapping={**MAPPING, "Others": [ECONOMICS, MANAGEMENT]})
    write_jsonl(
        root / "data" / "dev" / f"{MANAGEMENT}.jsonl",
        [row(0, "管理的首要职能是", ("计划", "组织", "领导", "控制"), "A")],
    )
    test_file = write_jsonl(
        root / "data" / "test" / f"{MANAGEMENT_TEST_FILE}.jsonl",
        [row(0, "SWOT分析中的S指", ("优势", "劣势", "机会", "威胁"), "")],
    )
    for source in (root, test_file):
        exam = load_exam_result("m3ke", source, "test").exam
        question = exam.question(f"{MANAGEMENT}/0")
        assert (question.subject, question.category, question.group) == (MANAGEMENT, "Others", "College")
        assert [q.id for q in exam.fewshot if q.subject == MANAGEMENT] == [f"{MANAGEMENT}/0"]  # its dev
    for name in (MANAGEMENT, MANAGEMENT_TEST_FILE):
        assert [q.id for q in load_exam_result("m3ke", root, "test", subjects=[name]).exam.questions] == [
            f"{MANAGEMENT}/0"
        ]
    # A test run answers the task under its one name, which M3KE's table (71 tasks) knows.
    assert M3KE_TASKS[MANAGEMENT] == "Others"
    store = str(store_path)
    args = ["--data", str(root), "--split", "test", "--model", "constant:A", "--store", store]
    assert main(["run", *args, "--run-name", "t"]) == 0
    out = tmp_path / "answers.json"
    assert main(["export", "m3ke-answers", "t", "-o", str(out), "--store", store]) == 0
    assert set(json.loads(out.read_text(encoding="utf-8"))) == {ECONOMICS, PHYSICS, MANAGEMENT}
    # Both files of the task in one split: the one under the task's own name is read.
    write_jsonl(root / "data" / "test" / f"{MANAGEMENT}.jsonl", [row(7, "另一题", ("1", "2", "3", "4"), "")])
    both = load_exam_result("m3ke", root, "test")
    assert [q.id for q in both.exam.questions if q.subject == MANAGEMENT] == [f"{MANAGEMENT}/7"]
    assert f"{test_file}: holds task '{MANAGEMENT}' too; {MANAGEMENT}.jsonl is read instead" in both.warnings


def test_an_unknown_task_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    write_jsonl(
        tmp_path / "dev" / "Astronomy-Natural Sciences-College.jsonl",
        [row(0, "q", ("1", "2", "3", "4"), "A")],
    )
    write_jsonl(tmp_path / "dev" / "notes.jsonl", [row(0, "q", ("1", "2", "3", "4"), "A")])
    result = load_exam_result("m3ke", tmp_path)
    assert {q.subject: q.category for q in result.exam.questions} == {
        "Astronomy-Natural Sciences-College": "Natural Sciences", "notes": None,
    }  # fmt: skip
    astronomy = tmp_path / "dev" / "Astronomy-Natural Sciences-College.jsonl"
    assert result.warnings == (
        f"{astronomy}: 'Astronomy-Natural Sciences-College' is not an M3KE task; loaded in cluster "
        "'Natural Sciences'",
        f"{tmp_path / 'dev' / 'notes.jsonl'}: 'notes' is not an M3KE task; loaded with no cluster",
    )


def test_bad_rows(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    path = write_jsonl(
        tmp_path / "dev" / f"{ECONOMICS}.jsonl",
        [
            row(0, "好题", ("1", "2", "3", "4"), "A"),
            '{"id": 1, "question": "坏JSON"',
            '["not", "an", "object"]',
            row(3, "坏答案", ("1", "2", "3", "4"), "E"),
            {"id": 4, "question": "缺选项", "A": "1", "C": "3", "D": "4", "answer": "A"},
            row(5, "", ("1", "2", "3", "4"), "A"),
            row(6, "无答案", ("1", "2", "3", "4"), ""),
            row(0, "重复", ("1", "2", "3", "4"), "B"),
            {"question": "无编号", "A": "1", "B": "2", "C": "3", "D": "4", "answer": "A"},
        ],
    )
    with pytest.raises(DataError) as info:
        load_exam_result("m3ke", tmp_path)
    errors = [str(e) for e in info.value.errors]
    assert errors[0].startswith(f"{path}:2: invalid JSON: ")
    assert errors[1:] == [
        f"{path}:3: expected a JSON object, got list",
        f"{path}:4: field 'answer': answer 'E' is not one of A, B, C, D",
        f"{path}:5: field 'B': missing required field",
        f"{path}:6: field 'question': is empty",
        f"{path}:7: field 'answer': missing answer (only the test split may omit it)",
        f"{path}:8: field 'id': duplicate id '{ECONOMICS}/0' (first seen at line 1)",
        f"{path}:9: field 'id': missing required field",
    ]
    assert [q.id for q in load_exam_result("m3ke", tmp_path, on_invalid="skip").exam.questions] == [
        f"{ECONOMICS}/0"
    ]


def test_an_empty_option_is_kept_and_named_in_one_warning(tmp_path: Path) -> None:
    # The published test split has three rows with an empty option cell ("A": ""); they load, the option
    # empty as the prompt prints it, and one warning says where. A missing or non-text cell stays an error.
    root = make_m3ke(tmp_path / "M3KE")
    path = write_jsonl(
        root / "data" / "test" / f"{ECONOMICS}.jsonl",
        [
            row(0, "通货膨胀是指", ("", "个别商品涨价", "工资上涨", "汇率上升"), ""),
            row(1, "GDP衡量的是", ("最终产品价值", "", "出口总额", "财政收入"), ""),
            row(
                2,
                "边际效用递减说的是",
                ("消费越多越满足", "每多一单位满足增加得越少", "价格下降", "收入增加"),
                "",
            ),
        ],
    )
    result = load_exam_result("m3ke", root, "test")
    first, second, _ = (q for q in result.exam.questions if q.subject == ECONOMICS)
    assert first.options[0] == ("A", "") and second.options[1] == ("B", "")
    assert result.warnings[0] == (
        f"2 row(s) have an empty option (kept empty, as the official prompt prints it): {path}:1, {path}:2"
    )
    write_jsonl(path, [{"id": 0, "question": "题", "A": 1, "B": "2", "C": "3", "D": "4", "answer": ""}])
    with pytest.raises(DataError) as info:
        load_exam_result("m3ke", root, "test")
    assert [str(e) for e in info.value.errors] == [f"{path}:1: field 'A': expected text, got int"]


def test_a_bad_mapping_file_is_named(tmp_path: Path) -> None:
    root = make_m3ke(tmp_path / "M3KE")
    (root / "subject_cluster.mapping.json").write_text(
        '{"Others": "Economics-Other-College"}', encoding="utf-8"
    )
    with pytest.raises(DataError, match=r"subject_cluster.mapping.json: expected \{cluster: \[task, ...\]\}"):
        load_exam_result("m3ke", root)


def test_no_data_is_one_clear_line() -> None:
    with pytest.raises(DataError) as info:
        load_exam_result("m3ke")
    message = str(info.value)
    assert "\n" not in message and message.startswith(
        "TJUNLP/M3KE on the Hugging Face hub is a loading script"
    )
    assert message.endswith("pass --data PATH")


def test_detection(repo: Path, tmp_path: Path) -> None:
    assert detect_benchmark(repo) == "m3ke"
    assert detect_benchmark(repo / "data") == "m3ke"
    assert detect_benchmark(repo / "data" / "dev" / f"{PHYSICS}.jsonl") == "m3ke"
    other = write_jsonl(tmp_path / "exam.jsonl", [{"id": "1", "type": "single"}])
    assert detect_benchmark(other) == "kaoshi"  # a JSONL file not named like a task stays kaoshi's
    assert get_benchmark("m3ke").default_prompt == "default"


# -- the command line ----------------------------------------------------------------------------------------
def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    return out


def test_test_split_runs_ungraded_and_exports_its_answers(
    capsys: pytest.CaptureFixture[str], repo: Path, tmp_path: Path, store_path: Path
) -> None:
    store = str(store_path)
    test_run = ["--split", "test", "--model", "constant:B", "--run-name", "t"]
    code, _, err = cli(capsys, "run", "--data", str(repo), *test_run, "--store", store)
    assert code == 0 and "M3KE's test labels are withheld" in err
    report: dict[str, Any] = json.loads(ok(capsys, "report", "t", "--format", "json", "--store", store))
    assert (report["n"], report["graded"], report["ungraded"]) == (3, 0, 3)
    out = tmp_path / "answers.json"
    code, _, err = cli(capsys, "export", "m3ke-answers", "t", "-o", str(out), "--store", store)
    assert code == 0 and "2 subjects, 3 answers" in err
    assert json.loads(out.read_text(encoding="utf-8")) == {
        ECONOMICS: {"0": "B", "1": "B"},
        PHYSICS: {"0": "B"},
    }
    ok(capsys, "run", "--data", str(repo), "--model", "constant:B", "--run-name", "d", "--store", store)
    code, _, err = cli(capsys, "export", "m3ke-answers", "d", "-o", str(out), "--store", store)
    assert code == 2 and "the 'dev' split; the answer file needs --split test" in err


def test_end_to_end_with_the_random_model(
    capsys: pytest.CaptureFixture[str], repo: Path, tmp_path: Path, store_path: Path
) -> None:
    store = str(store_path)
    rnd = ["--model", "random", "--run-name", "rnd"]
    ok(capsys, "run", "--benchmark", "m3ke", "--data", str(repo), *rnd, "--store", store)
    ok(capsys, "run", "--data", str(repo), "--model", "constant:A", "--run-name", "a", "--store", store)
    report: dict[str, Any] = json.loads(ok(capsys, "report", "rnd", "--format", "json", "--store", store))
    assert report["n"] == 5 and report["graded"] == 5
    assert set(report["groups"]["group"]) == {"College", "High school", "Primary school"}
    [board] = json.loads(
        ok(capsys, "leaderboard", "--benchmark", "m3ke", "--format", "json", "--store", store)
    )
    assert board["columns"][6:] == [
        "Arts & Humanities",
        "Social Sciences",
        "Natural Sciences",
        "Others",
        "Average",
    ]
    rows = {r[0]: r for r in board["rows"]}
    # constant A: Chinese 1/1, Economics 1/2, Physics 2/2 -> Average (100 + 50 + 100) / 3
    assert rows["a"][3] == "default 0-shot · no chat" and rows["a"][4] == "dev"
    assert rows["a"][6:] == ["100.0% (1/12)", "—", "100.0% (1/31)", "50.0% (1/7)", "83.3% (3/71)"]
    plot = tmp_path / "plot.png"
    ok(capsys, "plot", "rnd", "--by", "subject", "-o", str(plot), "--store", store)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = tmp_path / "report.html"
    ok(capsys, "html", "rnd", "a", "-o", str(page), "--store", store)
    assert "Economics-Other-College" in page.read_text(encoding="utf-8")


# -- arbitrary bytes never crash -----------------------------------------------------------------------------
GOOD_FILE = (
    json.dumps(row(0, "题一", ("甲", "乙", "丙", "丁"), "A"), ensure_ascii=False) + "\n"
).encode() * 2
TOKENS = [b"{", b"}", b'"', b"\n", b",", b"\xff", b'"answer": ""', b'"id": 0', b"null", b"[", b"\xef\xbb\xbf"]


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
        path = Path(folder) / "test" / f"{ECONOMICS}.jsonl"
        path.parent.mkdir()
        path.write_bytes(data)
        try:
            result = load_exam_result("m3ke", folder, "test", on_invalid="skip")
        except DataError as exc:
            assert folder in str(exc)
        else:
            assert all(q.subject == ECONOMICS for q in result.exam.questions)
