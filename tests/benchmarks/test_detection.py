"""Detection asks every benchmark and takes the most specific claim (kaoshi.benchmarks.detect): each
benchmark's published layout is told whatever order the registry lists them in, two equally specific
claims are refused naming both, a plugin's detector takes part like kaoshi's own, and no benchmark package
imports another (what they share is in kaoshi.benchmarks.common)."""

from __future__ import annotations

import ast
import json
import random
import re
import tempfile
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaoshi.benchmarks import (
    Benchmark,
    LoadRequest,
    detect,
    detect_benchmark,
    load_exam_result,
    register_benchmark,
    registry,
    unregister_benchmark,
)
from kaoshi.benchmarks.base import Specificity
from kaoshi.benchmarks.common.ceval_layout import claim_in_layout
from kaoshi.cli.main import main
from kaoshi.data import DataError, LoadResult
from kaoshi.errors import InputError
from tests.support.files import CEVAL_HEADER, write_csv, write_jsonl

CEVAL_ROW = ["0", "题干", "甲", "乙", "丙", "丁", "A", ""]
CMMLU_HEADER = ["", "Question", "A", "B", "C", "D", "Answer"]
CMMLU_ROW = ["0", "题干", "甲", "乙", "丙", "丁", "A"]
LOGIQA_RECORD = ["", "b", "甲说：“我会开车。”", "由此可以推出：", "A.甲", "B.乙", "C.丙", "D.丁"]
AGIEVAL_ROW = {"passage": None, "question": "题干", "options": ["(A)甲", "(B)乙"], "label": "A"}
M3KE_TASK = "Physics-Natural Sciences-High school"
GAOKAO_FILE = {"keywords": "2010-2022_Math_I_MCQs", "example": [{"year": "2010", "question": "题"}]}
CFLUE_RECORD = {"名称": "基金从业", "task": "单项选择题", "question": "题", "choices": "A.甲", "answer": "A"}


def _text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def ceval_folder(root: Path) -> Path:
    write_csv(root / "val" / "law_val.csv", CEVAL_HEADER, [CEVAL_ROW])
    write_csv(root / "dev" / "law_dev.csv", CEVAL_HEADER, [CEVAL_ROW])
    return root


def fineval_folder(root: Path) -> Path:
    write_csv(root / "val" / "tax_law_val.csv", CEVAL_HEADER, [CEVAL_ROW])
    write_csv(root / "val" / "finance_val.csv", CEVAL_HEADER, [CEVAL_ROW])
    return root


def cmmlu_repo(root: Path) -> Path:
    write_csv(root / "data" / "test" / "agronomy.csv", CMMLU_HEADER, [CMMLU_ROW])
    write_csv(root / "data" / "dev" / "agronomy.csv", CMMLU_HEADER, [CMMLU_ROW])
    return root


def m3ke_repo(root: Path) -> Path:
    row = {"id": 0, "question": "题", "A": "甲", "B": "乙", "C": "丙", "D": "丁", "answer": "A"}
    (root / "data" / "dev").mkdir(parents=True)
    write_jsonl(root / "data" / "dev" / f"{M3KE_TASK}.jsonl", [row])
    return root


def agieval_repo(root: Path) -> Path:
    (root / "data" / "v1").mkdir(parents=True)
    write_jsonl(root / "data" / "v1" / "gaokao-physics.jsonl", [AGIEVAL_ROW])
    return root


def gaokao_repo(root: Path) -> Path:
    _text(root / "Data" / "Objective_Questions" / "2010-2022_Math_I_MCQs.json", json.dumps(GAOKAO_FILE))
    return root


def cflue_repo(root: Path) -> Path:
    _text(root / "data" / "knowledge" / "knowledge.json", json.dumps([CFLUE_RECORD], ensure_ascii=False))
    return root


def cmexam_repo(root: Path) -> Path:
    header = ["Question", "Options", "Answer", "Explanation"]
    write_csv(root / "data" / "val.csv", header, [["题", "A 甲", "A", ""]])
    return root


def logiqa_file(path: Path) -> Path:
    return _text(path, "\n".join(LOGIQA_RECORD) + "\n")


def kaoshi_file(path: Path) -> Path:
    return write_jsonl(path, [{"id": "1", "type": "judge", "question": "q", "answer": True}])


def one_csv(path: Path, header: list[str], row: list[str]) -> Path:
    """The folder two levels up from a CSV file written there: {folder}/{split}/{file}."""
    return write_csv(path, header, [row]).parents[1]


# (case, what to write under tmp_path -> the path to detect, the benchmark it holds)
LAYOUTS: list[tuple[str, Callable[[Path], Path], str]] = [
    ("cmexam repository", cmexam_repo, "cmexam"),
    ("cmexam file", lambda p: cmexam_repo(p) / "data" / "val.csv", "cmexam"),
    ("cflue repository", cflue_repo, "cflue"),
    ("cflue file renamed", lambda p: _text(p / "subset.json", json.dumps([CFLUE_RECORD])), "cflue"),
    ("gaokao repository", gaokao_repo, "gaokao-bench"),
    ("gaokao folder", lambda p: gaokao_repo(p) / "Data" / "Objective_Questions", "gaokao-bench"),
    ("gaokao file alone", lambda p: _text(p / "math.json", json.dumps(GAOKAO_FILE)), "gaokao-bench"),
    ("qualbench json", lambda p: _text(p / "QualBench.json", "[]"), "qualbench"),
    ("other json", lambda p: _text(p / "other.json", '[{"question": "q"}]'), "qualbench"),
    (
        "qualbench jsonl",
        lambda p: write_jsonl(p / "q.jsonl", [{"idx": 1, "sub_domain": "安全"}]),
        "qualbench",
    ),
    ("agieval repository", agieval_repo, "agieval"),
    ("agieval task file", lambda p: agieval_repo(p) / "data" / "v1" / "gaokao-physics.jsonl", "agieval"),
    ("agieval rows renamed", lambda p: write_jsonl(p / "mine.jsonl", [AGIEVAL_ROW]), "agieval"),
    ("logiqa file", lambda p: logiqa_file(p / "zh_test.txt"), "logiqa"),
    ("logiqa folder", lambda p: logiqa_file(p / "zh_eval.txt").parent, "logiqa"),
    ("cmmlu repository", cmmlu_repo, "cmmlu"),
    ("cmmlu file", lambda p: cmmlu_repo(p) / "data" / "test" / "agronomy.csv", "cmmlu"),
    ("cmmlu header, own names", lambda p: one_csv(p / "test" / "mine.csv", CMMLU_HEADER, CMMLU_ROW), "cmmlu"),
    ("fineval folder", fineval_folder, "fineval"),
    ("fineval file", lambda p: fineval_folder(p) / "val" / "tax_law_val.csv", "fineval"),
    ("m3ke repository", m3ke_repo, "m3ke"),
    ("m3ke task file", lambda p: m3ke_repo(p) / "data" / "dev" / f"{M3KE_TASK}.jsonl", "m3ke"),
    ("ceval folder", ceval_folder, "ceval"),
    ("ceval file", lambda p: ceval_folder(p) / "val" / "law_val.csv", "ceval"),
    (
        "ceval layout, other subjects",
        lambda p: one_csv(p / "val" / "x_val.csv", CEVAL_HEADER, CEVAL_ROW),
        "ceval",
    ),
    ("kaoshi jsonl", lambda p: kaoshi_file(p / "exam.jsonl"), "kaoshi"),
    ("any other file", lambda p: _text(p / "notes.txt", "anything\n"), "kaoshi"),
]


def _orders() -> list[tuple[str, ...]]:
    names = tuple(registry.BUILTIN_BENCHMARKS)
    shuffled = []
    for seed in range(3):
        order = list(names)
        random.Random(seed).shuffle(order)
        shuffled.append(tuple(order))
    return [names, tuple(reversed(names)), *shuffled]


ORDERS = _orders()


@pytest.fixture(
    params=range(len(ORDERS)), ids=["listed", "reversed", "shuffled-0", "shuffled-1", "shuffled-2"]
)
def registry_order(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The built-in benchmarks listed in another order: detection must not depend on it."""
    order: tuple[str, ...] = ORDERS[request.param]
    monkeypatch.setattr(registry, "BUILTIN_BENCHMARKS", {n: registry.BUILTIN_BENCHMARKS[n] for n in order})
    return order


@pytest.mark.parametrize(("case", "write", "expected"), LAYOUTS, ids=[row[0] for row in LAYOUTS])
def test_each_layout_is_detected_whatever_the_registry_order(
    tmp_path: Path, registry_order: tuple[str, ...], case: str, write: Callable[[Path], Path], expected: str
) -> None:
    assert tuple(registry.benchmark_names()[: len(registry_order)]) == registry_order
    assert detect_benchmark(write(tmp_path)) == expected


# Openings each detector reads: JSON arrays and objects, CSV headers, LogiQA's answer letters.
CFLUE_OPENING = json.dumps([{"名称": 1, "task": 1, "choices": 1}], ensure_ascii=False).encode()
OPENINGS = [b"[", b"{", b'{"idx": 1}', CFLUE_OPENING, b"id,question,A,B,C,D\n", b",Question,A,B,C,D,Answer\n"]
OPENINGS += [b"\nb\n", b"\xff\xfe", b"\n"]


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(st.sampled_from(OPENINGS), st.binary(max_size=40)), max_size=4).map(b"".join),
    st.sampled_from(["QualBench.json", "exam.jsonl", "law_val.csv", "agronomy.csv", "zh_test.txt", "x"]),
)
def test_any_file_is_told_or_refused_clearly(content: bytes, name: str) -> None:
    """Every detector now reads every file it is shown: none fails on another format's bytes."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "val" / name
        path.parent.mkdir()
        path.write_bytes(content)
        for data in (path, Path(folder)):
            try:
                assert detect_benchmark(data) in registry.benchmark_names()
            except (DataError, InputError) as refused:
                assert str(refused).startswith(f"{data}: ")


def test_claims_say_how_specific_they_are(tmp_path: Path) -> None:
    # A FinEval folder: FinEval by its subjects beats C-Eval, whose layout it is.
    assert registry.detection_claims(fineval_folder(tmp_path / "f")) == {
        "fineval": Specificity.OWN_NAMES,
        "ceval": Specificity.FORMAT,
    }
    # A CFLUE file: its fields beat QualBench's any .json and kaoshi's any file.
    cflue = _text(tmp_path / "k.json", json.dumps([CFLUE_RECORD]))
    assert registry.detection_claims(cflue) == {
        "cflue": Specificity.FORMAT,
        "qualbench": Specificity.FILE_TYPE,
        "kaoshi": Specificity.ANY_FILE,
    }


@pytest.mark.parametrize(
    ("subjects", "expected"),
    [
        (["law"], "ceval"),
        (["tax_law"], "fineval"),
        (["law", "finance"], "ceval"),  # neither holds most: the layout is C-Eval's
        (["law", "finance", "insurance"], "fineval"),
        (["law", "accountant", "finance"], "ceval"),
        (["mine", "yours"], "ceval"),
    ],
)
def test_a_folder_in_ceval_layout_goes_to_whose_subjects_it_mostly_holds(
    tmp_path: Path, subjects: list[str], expected: str
) -> None:
    for subject in subjects:
        write_csv(tmp_path / "val" / f"{subject}_val.csv", CEVAL_HEADER, [CEVAL_ROW])
    assert detect_benchmark(tmp_path) == expected


def test_a_path_two_benchmarks_claim_equally_is_refused_naming_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # One folder holding a C-Eval layout and CMMLU's: each claims it by its own subject names.
    both = ceval_folder(tmp_path / "both")
    write_csv(both / "test" / "agronomy.csv", CMMLU_HEADER, [CMMLU_ROW])
    expected = (
        f"{both}: benchmarks cmmlu, ceval each claim this path by their own subject or task names; "
        "give --benchmark NAME to pick one"
    )
    with pytest.raises(InputError) as refused:
        detect_benchmark(both)
    assert str(refused.value) == expected
    with pytest.raises(InputError, match="give --benchmark NAME"):
        load_exam_result(None, both)
    assert main(["validate", str(both)]) == 2
    assert expected in capsys.readouterr().err
    # --benchmark picks one
    assert load_exam_result("ceval", both).exam.name == "ceval"


@pytest.fixture
def two_of_a_kind() -> Iterator[None]:
    """Two registered benchmarks whose yes/no detectors both take .pair files."""

    def load(request: LoadRequest) -> LoadResult:
        raise DataError("not loaded here")

    for name in ("pair-b", "pair-a"):
        register_benchmark(Benchmark(name, "pairs", load, detect=lambda path: path.suffix == ".pair"))
    yield
    unregister_benchmark("pair-b")
    unregister_benchmark("pair-a")


def test_registered_detectors_claiming_alike_are_refused(tmp_path: Path, two_of_a_kind: None) -> None:
    path = _text(tmp_path / "exam.pair", "x")
    with pytest.raises(InputError, match=r"benchmarks pair-b, pair-a each claim this path by its format"):
        detect(path)
    assert detect(_text(tmp_path / "exam.jsonl", "{}")) == "kaoshi"  # other files as before


def _refuse(request: LoadRequest) -> LoadResult:
    raise DataError("detection only")


# What an installed package declares (tests point its entry point here): a benchmark published in C-Eval's
# layout with subjects of its own, told by them as FinEval is, and its own .tiny files.
def _widgets(path: Path) -> Specificity | None:
    if path.suffix == ".tiny":
        return Specificity.OWN_NAMES
    return claim_in_layout(path, {"widgets"}, owns_layout=False)


PLUGIN = Benchmark("layout-plugin", "a plugin in C-Eval's layout", _refuse, detect=_widgets)
YES_NO_PLUGIN = Benchmark("yes-no-plugin", "a yes/no detector", _refuse, detect=lambda p: p.suffix == ".json")


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = {
        name: EntryPoint(name, f"{__name__}:{attribute}", registry.ENTRY_POINT_GROUP)
        for name, attribute in (("layout-plugin", "PLUGIN"), ("yes-no-plugin", "YES_NO_PLUGIN"))
    }
    monkeypatch.setattr(registry, "plugin_benchmarks", lambda: entries)


def test_a_plugin_detector_takes_part_like_kaoshis_own(
    tmp_path: Path, plugins: None, registry_order: tuple[str, ...]
) -> None:
    widgets = write_csv(tmp_path / "w" / "val" / "widgets_val.csv", CEVAL_HEADER, [CEVAL_ROW]).parents[1]
    assert detect_benchmark(widgets) == "layout-plugin"  # its subjects beat C-Eval's layout
    assert detect_benchmark(_text(tmp_path / "exam.tiny", "x")) == "layout-plugin"  # beats any file
    # A yes/no detector claims a format: more than QualBench's any .json ...
    assert detect_benchmark(_text(tmp_path / "exam.json", "[]")) == "yes-no-plugin"
    # ... as much as CFLUE's fields, so a CFLUE file is refused until --benchmark picks one.
    with pytest.raises(InputError, match="benchmarks cflue, yes-no-plugin each claim this path"):
        detect_benchmark(_text(tmp_path / "k.json", json.dumps([CFLUE_RECORD])))
    # kaoshi's own layouts stay theirs
    assert detect_benchmark(ceval_folder(tmp_path / "c")) == "ceval"
    assert detect_benchmark(fineval_folder(tmp_path / "f")) == "fineval"


def test_a_registered_benchmark_in_place_of_a_builtin_is_asked_instead(tmp_path: Path) -> None:
    path = _text(tmp_path / "QualBench.json", "[]")
    register_benchmark(Benchmark("qualbench", "mine, never detected", _refuse), replace=True)
    try:
        assert detect_benchmark(path) == "kaoshi"
    finally:
        unregister_benchmark("qualbench")
    assert detect_benchmark(path) == "qualbench"


def test_a_yes_or_no_detector_may_answer_anything_truthy(tmp_path: Path) -> None:
    """A detector written as a yes/no question (a regular expression's match, 0 or "") claims by its
    truthiness, at FORMAT; a falsy answer claims nothing and breaks no other benchmark's detection."""
    toy = Benchmark("toyre", "toy", _refuse, detect=lambda path: re.search(r"\.toy$", path.name))  # type: ignore[arg-type,return-value]
    never = Benchmark("never", "never", _refuse, detect=lambda path: 0)  # type: ignore[arg-type,return-value]
    register_benchmark(toy)
    register_benchmark(never)
    try:
        assert registry.detection_claims(_text(tmp_path / "x.toy", "x"))["toyre"] == Specificity.FORMAT
        assert detect(tmp_path / "x.toy") == "toyre"
        assert "never" not in registry.detection_claims(tmp_path / "x.toy")
        assert detect(_text(tmp_path / "a.txt", "x")) == "kaoshi"
    finally:
        unregister_benchmark("toyre")
        unregister_benchmark("never")


def test_no_benchmark_package_imports_another() -> None:
    """What benchmarks share lives in kaoshi.benchmarks.common, which imports none of them."""
    root = Path(registry.__file__).parent
    packages = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    benchmarks = packages - {"common"}
    crossing = []
    for package in sorted(packages):
        for module in sorted((root / package).glob("*.py")):
            for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
                for name in names:
                    parts = name.split(".")
                    if parts[:2] == ["kaoshi", "benchmarks"] and len(parts) > 2:
                        target = parts[2]
                        if target in benchmarks and target != package:
                            crossing.append(f"{module.relative_to(root)} imports {name}")
    assert crossing == []
