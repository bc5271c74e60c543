"""The benchmark registry: kaoshi's own benchmarks behave as before, and a benchmark registered from user
code (tests/support/toy_benchmark.py, one module) loads, gets its prompt, leaderboard layout and exporter."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import kaoshi
from kaoshi.api.summary import benchmark_metrics
from kaoshi.benchmarks import (
    BENCHMARK_DEFAULTS,
    BENCHMARKS,
    Benchmark,
    benchmark_names,
    default_template_name,
    detect_benchmark,
    find_benchmark,
    get_benchmark,
    leaderboard_layout,
    load_exam_result,
    register_benchmark,
    unregister_benchmark,
)
from kaoshi.data import DataError
from kaoshi.report.leaderboard import build_board, leaderboard_table
from kaoshi.results.layout import DomainLayout
from tests.support import toy_benchmark
from tests.support.files import CEVAL_HEADER, CEVAL_ROWS_PER_SUBJECT, full_ceval, write_csv, write_jsonl

BUILTIN = (
    "sample",
    "cmexam",
    "cflue",
    "gaokao-bench",
    "qualbench",
    "agieval",
    "logiqa",
    "cmmlu",
    "fineval",
    "m3ke",
    "ceval",
    "ceval-hard",
    "kaoshi",
)
TOY_ROWS = [
    "a1\tarithmetic\t1 + 1 = ?\t2|3|4\tA",
    "a2\tarithmetic\t2 + 2 = ?\t4|3|5\tA",
    "g1\tgeography\t中国的首都是？\t北京|上海\tA",
    "g2\tgeography\t长江流入哪个海？\t渤海|东海\tB",
]


@pytest.fixture
def toy() -> Iterator[Benchmark]:
    yield toy_benchmark.register()
    unregister_benchmark(toy_benchmark.NAME)


@pytest.fixture
def toy_file(tmp_path: Path) -> Path:
    path = tmp_path / "exam.toy"
    path.write_text("\n".join(TOY_ROWS) + "\n", encoding="utf-8")
    return path


def test_builtin_benchmarks_are_listed_in_order() -> None:
    assert BENCHMARKS == BUILTIN
    assert benchmark_names() == BUILTIN
    assert [get_benchmark(name).name for name in BUILTIN] == list(BUILTIN)


@pytest.mark.parametrize(
    ("benchmark", "prompt"),
    [
        ("ceval", "ceval-answer-only"),
        ("ceval-hard", "ceval-answer-only"),
        ("qualbench", "qualbench"),
        ("gaokao-bench", "gaokao"),
        ("sample", "lhmke"),
        ("kaoshi", "lhmke"),
        ("not-a-benchmark", "default"),
        ("", "default"),
    ],
)
def test_default_prompts(benchmark: str, prompt: str) -> None:
    assert default_template_name(benchmark) == prompt


def test_benchmark_defaults_reads_the_registry() -> None:
    assert dict(BENCHMARK_DEFAULTS) == {
        "sample": "lhmke",
        "cmexam": "cmexam",
        "cflue": "cflue",
        "gaokao-bench": "gaokao",
        "qualbench": "qualbench",
        "agieval": "agieval",
        "logiqa": "default",
        "cmmlu": "cmmlu",
        "fineval": "fineval",
        "m3ke": "default",
        "ceval": "ceval-answer-only",
        "ceval-hard": "ceval-answer-only",
        "kaoshi": "lhmke",
    }


def test_unknown_benchmark_names_the_known_ones() -> None:
    with pytest.raises(DataError) as info:
        load_exam_result("mmcu")
    known = ", ".join(BUILTIN)
    assert str(info.value) == f"unknown benchmark 'mmcu' (known: {known})"
    with pytest.raises(KeyError, match="unknown benchmark 'mmcu'"):
        get_benchmark("mmcu")
    assert find_benchmark("mmcu") is None


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("QualBench.json", "[]", "qualbench"),
        ("shuffled.jsonl", json.dumps({"idx": 1, "question_type": "单选题"}), "qualbench"),
        ("exam.jsonl", json.dumps({"id": "1", "type": "single"}), "kaoshi"),
        ("exam.jsonl", "{not json", "kaoshi"),
        ("exam.jsonl", "\n\n", "kaoshi"),
        ("exam.txt", "anything", "kaoshi"),
        ("exam.toy", "a\tb", "kaoshi"),  # the toy benchmark is not registered here
    ],
)
def test_detection(tmp_path: Path, name: str, content: str, expected: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    assert detect_benchmark(path) == expected


def test_each_published_benchmark_says_what_was_checked_on_its_own_files(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kaoshi.cli.main import main

    checked = {b.name: b.published for b in kaoshi.list_benchmarks() if b.published is not None}
    published = {"agieval", "ceval", "cflue", "cmexam", "cmmlu", "fineval", "gaokao-bench", "logiqa", "m3ke"}
    assert set(checked) == published
    for check in checked.values():
        assert check is not None and len(check.commit) == 40 and int(check.commit, 16) >= 0
        assert check.repository.count("/") == 1 and check.official_count and check.loaded
    assert main(["benchmarks", "--format", "json"]) == 0
    listed = {b["name"]: b["published"] for b in json.loads(capsys.readouterr().out)}
    assert listed["cmmlu"]["official_count"] == "11,582 test + 335 dev"
    assert listed["sample"] is None
    assert main(["benchmarks", "--format", "md"]) == 0
    assert (
        "| gaokao-bench | OpenLMLab/GAOKAO-Bench @ 6dbb24f | 2,811: 1,781 objective"
        in capsys.readouterr().out
    )


def test_detection_of_folders_and_missing_paths(tmp_path: Path) -> None:
    # A folder is C-Eval's only when it is in C-Eval's layout; an empty one is nobody's.
    with pytest.raises(DataError, match="no benchmark reads this path; give --benchmark NAME"):
        detect_benchmark(tmp_path)
    write_csv(tmp_path / "val" / "law_val.csv", CEVAL_HEADER, [["0", "q", "1", "2", "3", "4", "A", ""]])
    assert detect_benchmark(tmp_path) == "ceval"
    with pytest.raises(DataError, match="no such file or directory"):
        detect_benchmark(tmp_path / "missing.jsonl")


def test_register_refuses_a_known_name_unless_replacing(toy: Benchmark) -> None:
    with pytest.raises(ValueError, match="'toy' is already known"):
        register_benchmark(toy)
    with pytest.raises(ValueError, match="'ceval' is already known"):
        register_benchmark(Benchmark("ceval", "another C-Eval", toy.load))
    with pytest.raises(TypeError):
        register_benchmark("toy")  # type: ignore[arg-type]
    assert register_benchmark(toy, replace=True) is toy
    assert benchmark_names() == (*BUILTIN, "toy")


def test_replacing_a_builtin_and_unregistering_brings_it_back() -> None:
    mine = Benchmark("sample", "my sample", toy_benchmark.load_toy, default_prompt="qualbench-zero")
    register_benchmark(mine, replace=True)
    try:
        assert get_benchmark("sample") is mine
        assert benchmark_names() == BUILTIN
        assert default_template_name("sample") == "qualbench-zero"
    finally:
        unregister_benchmark("sample")
    assert default_template_name("sample") == "lhmke"
    with pytest.raises(KeyError):
        unregister_benchmark("sample")


def test_a_registered_benchmark_loads_through_load_exam(toy: Benchmark, toy_file: Path) -> None:
    result = load_exam_result("toy", toy_file)
    assert [q.id for q in result.exam.questions] == ["a1", "a2", "g1", "g2"]
    assert result.exam.metadata["benchmark"] == "toy"  # filled in: the toy loader leaves it out
    assert [q.id for q in load_exam_result("toy", toy_file, subjects=["geography"]).exam.questions] == [
        "g1",
        "g2",
    ]
    # its detector claims .toy files before kaoshi's catch-all; other files are detected as before
    assert load_exam_result(None, toy_file).exam.metadata["benchmark"] == "toy"
    kaoshi_file = write_jsonl(
        toy_file.with_suffix(".jsonl"), [{"id": "1", "type": "judge", "question": "q", "answer": True}]
    )
    assert detect_benchmark(kaoshi_file) == "kaoshi"
    with pytest.raises(DataError, match="needs --data PATH"):
        load_exam_result("toy")


def test_a_registered_benchmark_runs_with_its_prompt_and_layout(
    toy: Benchmark, toy_file: Path, store_path: Path, tmp_path: Path
) -> None:
    exam = kaoshi.load_exam("toy", toy_file)
    for name, model in (("always-b", "constant:B"), ("always-a", "constant:A")):
        result = kaoshi.evaluate(exam, model, run_name=name, store=store_path)
        assert (result.spec.benchmark, result.spec.prompt) == ("toy", "qualbench-zero")
    loaded = [kaoshi.load_run(name, store=store_path) for name in ("always-b", "always-a")]
    board = build_board(
        "toy",
        [(r.run, list(r.samples), r.grader) for r in loaded],
        leaderboard_layout("toy"),
        metrics=benchmark_metrics("toy"),
    )
    table = leaderboard_table(board)
    assert table.headers[6:] == ("arithmetic", "geography", "subject mean")
    # ranked by the layout's headline, the mean over subjects
    assert [[row[0], *row[6:]] for row in table.rows] == [
        ["always-a", "100.0%", "50.0%", "75.0%"],
        ["always-b", "0.0%", "50.0%", "25.0%"],
    ]
    assert "toy: one column per subject" in table.note
    # An average over fewer subjects than the benchmark has says so.
    some = kaoshi.evaluate(
        kaoshi.load_exam("toy", toy_file, subjects=["arithmetic"]), "constant:A", run_name="some",
        store=store_path,
    )  # fmt: skip
    one = kaoshi.load_run(some.name, store=store_path)
    alone = leaderboard_table(
        build_board(
            "toy",
            [(one.run, list(one.samples), one.grader)],
            leaderboard_layout("toy"),
            metrics=benchmark_metrics("toy"),
        )
    )
    assert alone.rows[0][6:] == ["100.0%", "100.0% (1/2)"]
    # The exporter is found through the registry.
    out = tmp_path / "answers.tsv"
    assert toy.exporters[0].write(one.run, one.samples, out) == (f"wrote {out}: 2 answers",)
    assert out.read_text(encoding="utf-8") == "a1\tA\na2\tA\n"


def test_unknown_benchmarks_get_the_domain_layout() -> None:
    assert isinstance(leaderboard_layout("a-plugin-not-loaded"), DomainLayout)
    assert isinstance(leaderboard_layout("qualbench"), DomainLayout)
    assert leaderboard_layout("ceval") is leaderboard_layout("ceval-hard")


def test_ceval_submission_through_the_registry(tmp_path: Path, store_path: Path) -> None:
    root = full_ceval(tmp_path / "ceval-exam")
    kaoshi.evaluate(kaoshi.load_exam("ceval", root, "test"), "constant:B", run_name="t", store=store_path)
    run = kaoshi.load_run("t", store=store_path)
    (exporter,) = get_benchmark("ceval").exporters
    out = tmp_path / "submission.json"
    assert exporter.name == "ceval-submission"
    assert exporter.write(run.run, run.samples, out) == (
        f"wrote {out}: 52 subjects, {52 * CEVAL_ROWS_PER_SUBJECT} answers",
    )
    assert json.loads(out.read_text(encoding="utf-8"))["law"] == {"0": "B", "1": "B", "2": "B"}
    assert get_benchmark("ceval-hard").exporters == ()


def test_ceval_hard_table_is_the_hard_subjects(tmp_path: Path) -> None:
    hard = get_benchmark("ceval-hard")
    assert set(hard.categories) < set(get_benchmark("ceval").categories)
    assert set(hard.categories.values()) == {"STEM"}
    write_csv(
        tmp_path / "val" / "college_physics_val.csv", CEVAL_HEADER, [["0", "q", "1", "2", "3", "4", "A", ""]]
    )
    write_csv(tmp_path / "val" / "law_val.csv", CEVAL_HEADER, [["0", "q", "1", "2", "3", "4", "A", ""]])
    assert [q.subject for q in load_exam_result("ceval-hard", tmp_path).exam.questions] == ["college_physics"]


def test_importing_and_loading_stay_light(tmp_path: Path) -> None:
    """`import kaoshi.data` imports no benchmark module (the data layer sits below them); loading C-Eval
    imports no report or store code (rich, sqlite3), nor another benchmark's package."""
    write_csv(tmp_path / "val" / "law_val.csv", CEVAL_HEADER, [["0", "q", "1", "2", "3", "4", "A", ""]])
    code = (
        "import json, sys, kaoshi.data\n"
        "imported = sorted(m for m in sys.modules if m.startswith('kaoshi.benchmarks'))\n"
        "import kaoshi.benchmarks\n"
        f"kaoshi.benchmarks.load_exam_result(None, {str(tmp_path)!r})\n"
        "detectors = sorted({m.split('.')[2] for m in sys.modules\n"
        "                    if m.count('.') >= 3 and m.startswith('kaoshi.benchmarks.')})\n"
        "heavy = [m for m in ('rich', 'sqlite3', 'kaoshi.report', 'kaoshi.store') if m in sys.modules]\n"
        "print(json.dumps([imported, heavy, detectors]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    imported, heavy, detectors = json.loads(out)
    assert imported == []
    assert heavy == []
    assert "ceval" in detectors  # the folder was told C-Eval by asking the benchmarks' detectors
