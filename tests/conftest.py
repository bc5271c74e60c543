from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kaoshi.data.model import Exam
from kaoshi.store import RunSpec

# Converted GGUF models (kaoshi.models.gguf_cache) go beside pytest's own cache, never into the user's
# home; CLI tests run in subprocesses, which inherit it.
os.environ.setdefault("KAOSHI_CACHE", str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "kaoshi"))


def write_jsonl(path: Path, rows: list[Any], *, newline: str = "\n", bom: bool = False) -> Path:
    text = (
        newline.join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + newline
    )
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite"


def mock_script(path: Path, right: set[str]) -> Path:
    """A mock model for the sample exam, right on the questions in `right` and wrong elsewhere."""
    from kaoshi.data import load_exam

    rows = []
    for q in load_exam("sample").exam.questions:
        if q.type.value == "open":
            rows.append({"id": q.id, "response": "参考回答"})
        elif q.type.value == "judge":
            good = q.answer if q.id in right else not q.answer
            rows.append({"id": q.id, "response": f"答案：{'正确' if good else '错误'}"})
        else:
            gold = "".join(sorted(q.answer))  # type: ignore[arg-type]
            # a letter outside the gold set, or (all options right) a strict subset
            wrong = next((letter for letter in q.letters if letter not in gold), gold[:-1])
            rows.append({"id": q.id, "response": f"答案：{gold if q.id in right else wrong}"})
    return write_jsonl(path, rows)


@pytest.fixture
def two_runs(capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path) -> Path:
    """A store with runs 'strong' (right on all 40 objective sample questions) and 'weak' (10 of 40)."""
    from kaoshi.cli.main import main
    from kaoshi.data import load_exam

    objective = [q.id for q in load_exam("sample").exam.questions if q.type.value != "open"]
    strong = mock_script(tmp_path / "strong.jsonl", set(objective))  # right on all 40
    weak = mock_script(tmp_path / "weak.jsonl", set(objective[:10]))  # right on 10 of 40
    for name, script in (("strong", strong), ("weak", weak)):
        code = main(
            ["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", name,
             "--store", str(store_path)]
        )  # fmt: skip
        assert code == 0, capsys.readouterr().err
        capsys.readouterr()
    return store_path


def exam_spec(exam: Exam, model: str, method: str = "generate", **overrides: Any) -> RunSpec:
    """The run spec of a test run over `exam`: defaults for every field the test does not set."""
    values: dict[str, Any] = {
        "benchmark": "kaoshi",
        "data": None,
        "split": None,
        "fingerprint": exam.fingerprint,
        "n_questions": len(exam),
        "prompt": "default",
        "prompt_version": 1,
        "shots": 0,
        "model": model,
        "method": method,
        "seed": 0,
        "limit": None,
        "max_new_tokens": 64,
        **overrides,
    }
    return RunSpec(**values)
