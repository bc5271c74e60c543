"""Pytest fixtures shared by every layer. Plain helpers live in tests/support/, which fixtures may call."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.runs import mock_script

# Converted GGUF models (kaoshi.models.gguf_cache) go beside pytest's own cache, never into the user's
# home; CLI tests run in subprocesses, which inherit it.
os.environ.setdefault("KAOSHI_CACHE", str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "kaoshi"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Close what llama-cpp-python opens on import and never closes (two files on /dev/null in
    llama_cpp._utils), so that the suite's end shows no ResourceWarning that is not ours."""
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        opened = getattr(utils, name, None)
        if opened is not None and not opened.closed:
            opened.close()


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite"


@pytest.fixture
def two_runs(capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path) -> Path:
    """A store with runs 'strong' (right on all 40 objective sample questions) and 'weak' (10 of 40)."""
    from kaoshi.benchmarks import load_exam_result
    from kaoshi.cli.main import main

    objective = [q.id for q in load_exam_result("sample").exam.questions if q.type.value != "open"]
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
