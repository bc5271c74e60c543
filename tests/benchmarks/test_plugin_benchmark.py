"""A benchmark from another installed package: pip installs a tiny one (its own loader, detector, prompt
template and leaderboard layout) declared in the `kaoshi.benchmarks` entry-point group; kaoshi, left
untouched, lists it, detects its files, runs it with its own prompt from the command line and ranks it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.installed import kaoshi, pip_installed

pytestmark = pytest.mark.slow  # pip installs a package; every command is a subprocess

PACKAGE = '''
"""kaoshi-tiny: a made-up benchmark shipped as its own package."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kaoshi.benchmarks import Benchmark, LoadRequest
from kaoshi.data import DataError, Exam, LoadResult, Question, QuestionType
from kaoshi.prompts import Prompt, RenderOptions
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget


def load(request: LoadRequest) -> LoadResult:
    if request.data is None:
        raise DataError("tiny needs --data FILE.tiny")
    questions = []
    for number, line in enumerate(request.data.read_text(encoding="utf-8").splitlines(), start=1):
        stem, options, answer = line.split("|")
        letters = "ABCD"[: len(options.split(","))]
        questions.append(
            Question(
                id=f"tiny-{number}",
                type=QuestionType.SINGLE,
                stem=stem,
                options=tuple(zip(letters, options.split(","), strict=True)),
                answer=frozenset(answer),
                subject="算术",
                split="test",
            )
        )
    return LoadResult(Exam("tiny", tuple(questions), metadata={"path": str(request.data)}), ())


@dataclass(frozen=True)
class TinyTemplate:
    name: str = "tiny-prompt"
    version: int = 1
    default_shots: int = 0
    budget: GenerationBudget = DEFAULT_BUDGET

    def answer_end(self, chat: bool) -> str | None:
        return None

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        body = "\\n".join(f"{letter}) {text}" for letter, text in question.options)
        return Prompt(text=f"[tiny] {question.stem}\\n{body}\\n答案：", shots=0)


TINY = Benchmark(
    name="tiny",
    description="a made-up benchmark from an installed package",
    load=load,
    default_prompt="tiny-prompt",
    detect=lambda path: path.suffix == ".tiny",
    templates=(TinyTemplate(),),
    formats="a .tiny file: stem|option,option|letter",
)
'''

ENTRY_POINTS = {"kaoshi.benchmarks": {"tiny": "kaoshi_tiny:TINY"}}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a Python where kaoshi-tiny is pip-installed (into a folder on its path)."""
    return pip_installed(
        tmp_path_factory.mktemp("plugin"), "kaoshi-tiny", "kaoshi_tiny", PACKAGE, ENTRY_POINTS
    )


def test_an_installed_benchmark_is_listed(installed: dict[str, str]) -> None:
    listed = kaoshi(installed, "benchmarks", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    found = {b["name"]: b for b in json.loads(listed.stdout)}
    assert found["tiny"]["description"] == "a made-up benchmark from an installed package"
    assert found["tiny"]["default_prompt"] == "tiny-prompt"
    # without the package, kaoshi does not know it
    alone = kaoshi({**os.environ}, "benchmarks", "--format", "json")
    assert "tiny" not in {b["name"] for b in json.loads(alone.stdout)}


def test_an_installed_benchmark_runs_from_the_command_line(installed: dict[str, str], tmp_path: Path) -> None:
    data = tmp_path / "exam.tiny"
    data.write_text("1+1=?|1,2,3|B\n2+2=?|4,5,6|A\n3+3=?|5,6,7|B\n", encoding="utf-8")
    script = tmp_path / "replies.jsonl"
    script.write_text(
        "".join(
            json.dumps({"id": f"tiny-{n}", "response": r}) + "\n"
            for n, r in ((1, "答案：B"), (2, "A"), (3, "C"))
        ),
        encoding="utf-8",
    )
    store = str(tmp_path / "runs.sqlite")
    # --data alone: the plugin's detector claims the file
    run = kaoshi(
        installed,
        "run",
        "--data",
        str(data),
        "--model",
        f"mock:{script}",
        "--run-name",
        "t",
        "--store",
        store,
    )
    assert run.returncode == 0, run.stderr
    shown = kaoshi(installed, "samples", "t", "--format", "jsonl", "--store", store)
    samples = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [s["correct"] for s in samples] == [True, True, False]
    runs = json.loads(kaoshi(installed, "runs", "--format", "json", "--store", store).stdout)
    assert runs[0]["benchmark"] == "tiny"
    prompt = kaoshi(
        installed, "prompt", "show", "--benchmark", "tiny", "--data", str(data), "--question", "tiny-2"
    )
    assert prompt.returncode == 0, prompt.stderr
    assert "[tiny] 2+2=?" in prompt.stdout  # the plugin's own template, its default
    board = kaoshi(installed, "leaderboard", "--format", "json", "--store", store)
    assert board.returncode == 0, board.stderr
    assert json.loads(board.stdout)[0]["benchmark"] == "tiny"
