"""A model backend from another installed package: pip installs a tiny one declared in the `kaoshi.models`
entry-point group (and one under a name kaoshi has, which is skipped); kaoshi, left untouched, lists it
with what its class declares, runs it with `--model NAME:ARG` from the command line and from
`kaoshi.evaluate`, and refuses what it declares it cannot do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.installed import kaoshi, pip_installed

pytestmark = pytest.mark.slow  # pip installs a package; every command is a subprocess

PACKAGE = '''
"""kaoshi-letter: a made-up backend shipped as its own package."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.models.base import Capabilities, ChatForm


class LetterModel(Model):
    """Answers the letter its spec names (letter:B)."""

    capabilities = Capabilities(
        description="answers the letter its spec names",
        argument="LETTER",
        methods=frozenset({"generate"}),
        chat=ChatForm.CHAT,
        sampling=frozenset({"temperature"}),
    )

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        self.letter = spec.partition(":")[2]

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            yield ModelOutput(request.id, text=self.letter)
'''

ENTRY_POINTS = {
    "kaoshi.models": {"letter": "kaoshi_letter:LetterModel", "random": "kaoshi_letter:LetterModel"}
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a Python where kaoshi-letter is pip-installed (into a folder on its path)."""
    return pip_installed(
        tmp_path_factory.mktemp("plugin"), "kaoshi-letter", "kaoshi_letter", PACKAGE, ENTRY_POINTS
    )


def test_an_installed_backend_is_listed_and_a_taken_name_skipped(installed: dict[str, str]) -> None:
    listed = kaoshi(installed, "models", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    found = {b["name"]: b for b in json.loads(listed.stdout)}
    letter = found["letter"]
    assert (letter["spec"], letter["source"], letter["class"]) == (
        "letter:LETTER",
        "kaoshi-letter",
        "kaoshi_letter:LetterModel",
    )
    assert letter["methods"] == ["generate"] and letter["chat"]["generate"] == "chat"
    assert letter["installed"] is True
    assert (
        "backend 'random' (kaoshi_letter:LetterModel) of the package kaoshi-letter is skipped: the name is "
        "taken" in listed.stderr
    )
    assert (found["random"]["source"], found["random"]["class"]) == (
        "kaoshi",
        "kaoshi.models.baselines:RandomModel",
    )
    table = kaoshi(installed, "models")
    assert table.returncode == 0 and "letter:LETTER" in table.stdout and "kaoshi-letter" in table.stdout
    # without the package, kaoshi does not know it
    alone = kaoshi({**os.environ}, "models", "--format", "json")
    assert "letter" not in {b["name"] for b in json.loads(alone.stdout)}


def test_an_installed_backend_runs_from_the_command_line(installed: dict[str, str], tmp_path: Path) -> None:
    store = str(tmp_path / "runs.sqlite")
    run = kaoshi(installed, "run", "--benchmark", "sample", "--model", "letter:B", "--run-name", "t",
                 "--store", store)  # fmt: skip
    assert run.returncode == 0, run.stderr
    shown = kaoshi(installed, "samples", "t", "--format", "jsonl", "--store", store)
    samples = [json.loads(line) for line in shown.stdout.splitlines()]
    assert samples and {s["response"] for s in samples} == {"B"}
    singles = [s for s in samples if s["type"] == "single"]
    assert [s["correct"] for s in singles] == [s["gold"] == "B" for s in singles]
    runs = json.loads(kaoshi(installed, "runs", "--format", "json", "--store", store).stdout)
    assert (runs[0]["model"], runs[0]["spec"]["chat"]) == ("letter:B", True)  # its declared chat form
    # what the class declares it cannot do is refused before any request
    refused = kaoshi(installed, "run", "--benchmark", "sample", "--model", "letter:B", "--method", "loglik",
                     "--store", store)  # fmt: skip
    assert refused.returncode == 2 and "cannot do --method loglik" in refused.stderr
    refused = kaoshi(installed, "run", "--benchmark", "sample", "--model", "letter:B", "--top-p", "0.9",
                     "--temperature", "0.7", "--store", store)  # fmt: skip
    assert refused.returncode == 2 and "cannot honour --top-p" in refused.stderr


def test_an_installed_backend_runs_from_python(installed: dict[str, str]) -> None:
    script = (
        "import json, kaoshi\n"
        "result = kaoshi.evaluate('sample', 'letter:C', limit_total=5)\n"
        "print(json.dumps([result.spec.model, result.spec.chat, [s.response for s in result.samples]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=installed)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["letter:C", True, ["C"] * 5]
