"""kaoshi models: every backend kaoshi can run (its own and installed packages'), what each can do and
whether it is installed here, as a table and as JSON; `kaoshi run --help` names them all."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.models.registry import BACKENDS, plugin_backends
from tests.support.backend_plugins import ABSENT_MODULE, declare_backends

LETTER = "tests.support.backend_plugins:LetterModel"


@pytest.fixture
def letter_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The `letter` backend, declared as the package kaoshi-letter would declare it."""
    declare_backends(tmp_path, "kaoshi-letter", {"letter": LETTER})
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin_backends.cache_clear()
    yield
    plugin_backends.cache_clear()


def _kaoshi(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_the_table_lists_every_backend_and_what_it_can_do(
    letter_installed: None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    out = _kaoshi(capsys, "models")
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.startswith("│ ")}
    assert list(rows) == [*BACKENDS, "letter"]
    cells = {name: [cell.strip() for cell in line.split("│")[1:-1]] for name, line in rows.items()}
    assert cells["openai"][:2] == ["openai", "openai:MODEL"]
    assert cells["openai"][3:9] == [
        "generate, loglik",
        "chat; loglik: plain",
        "temperature, top_p, top_k, thinking",
        "—",
        "yes",
        "kaoshi",
    ]
    assert cells["hf"][4] == "the model's template" and cells["hf"][6] == "yes"  # takes adapters
    assert cells["llamacpp"][5] == "temperature, top_p, top_k"
    # a package's backend, what it needs, and the command that installs it (brackets and all)
    assert cells["letter"][1:5] == ["letter:LETTER", "answers the letter its spec names", "generate", "chat"]
    assert cells["letter"][8:] == [
        "kaoshi-letter",
        f"no ({ABSENT_MODULE}): pip install 'kaoshi-letter[fast]'",
    ]
    assert '[project.entry-points."kaoshi.models"]' in out


def test_json_holds_each_backends_declaration(
    letter_installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = {b["name"]: b for b in json.loads(_kaoshi(capsys, "models", "--format", "json"))}
    assert list(listed) == [*BACKENDS, "letter"]
    openai = listed["openai"]
    assert openai["chat"] == {"generate": "chat", "loglik": "plain"}
    assert (openai["batch_endpoint"], openai["extra_body"], openai["adapters"]) == (True, True, False)
    assert openai["needs"] == ["aiohttp"] and openai["install"] == "pip install 'kaoshi[api]'"
    assert listed["smollm2"]["spec"] == "smollm2" and listed["smollm2"]["adapters"] is True
    assert listed["random"]["needs"] == [] and listed["random"]["installed"] is True
    assert listed["letter"] == {
        "name": "letter",
        "spec": "letter:LETTER",
        "source": "kaoshi-letter",
        "class": LETTER,
        "description": "answers the letter its spec names",
        "methods": ["generate"],
        "chat": {"generate": "chat", "loglik": "chat"},
        "sampling": [],
        "extra_body": False,
        "adapters": False,
        "batch_endpoint": False,
        "needs": [ABSENT_MODULE],
        "install": "pip install 'kaoshi-letter[fast]'",
        "installed": False,
        "missing": [ABSENT_MODULE],
        "error": None,
    }


def test_markdown_keeps_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    out = _kaoshi(capsys, "models", "--format", "md")
    assert "| name | --model | what it is | methods | chat by default | sampling |" in out
    assert "| openai | openai:MODEL |" in out


def test_run_help_names_the_packages_backends_too(
    letter_installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"NAME one of {', '.join(BACKENDS)}, letter (kaoshi models:" in text
    assert "py:MODULE:CLASS[:ARG]" in text
