"""Stored runs written by kaoshi before the benchmark packages (issue 29) re-report byte-identically and
resume. The store and the expected outputs were made once by make_golden.py on the commit in WRITTEN_BY."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.golden.commands import COMMANDS, kaoshi_command, run_command

HERE = Path(__file__).resolve().parent


@pytest.fixture
def store(tmp_path: Path) -> Path:
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(HERE / "store.sqlite", copy)
    return copy


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_stored_run_re_reports_byte_identically(name: str, store: Path, tmp_path: Path) -> None:
    expected = (HERE / "expected" / f"{name}.txt").read_bytes()
    got = run_command(COMMANDS[name], store, tmp_path)
    if got != expected:
        diff = difflib.unified_diff(
            expected.decode().splitlines(), got.decode().splitlines(), "before", "now", lineterm="", n=1
        )
        pytest.fail(f"{name} changed:\n" + "\n".join(list(diff)[:60]))


def test_the_expected_outputs_are_reports() -> None:
    """The kept outputs hold numbers, so an empty or failed command cannot pass as 'identical'."""
    for name in COMMANDS:
        text = (HERE / "expected" / f"{name}.txt").read_text(encoding="utf-8")
        assert "\n[exit 0]\n" in text and len(text) > 500, name
    report = json.loads((HERE / "expected" / "report-good-json.txt").read_text("utf-8").split("\n[exit")[0])
    assert report, "the JSON report is empty"


def test_a_stored_run_resumes_without_asking_again(store: Path) -> None:
    before = run_command(COMMANDS["report-good-json"], store, store.parent)
    done = subprocess.run(
        [*kaoshi_command(), "run", "--benchmark", "sample", "--model", "random", "--seed", "3",
         "--run-name", "sample-random", "--store", str(store)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "0 new" in said or "already" in said, said
    assert run_command(COMMANDS["report-good-json"], store, store.parent) == before
    samples = run_command(["samples", "sample-random", "--format", "jsonl"], store, store.parent)
    assert samples.count(b'"id"') == 44
