"""A missing optional library is named with the extra that installs it, and that extra really has it."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kaoshi.data.errors import DataError
from kaoshi.models import ModelOptions
from kaoshi.models.base import ModelError

ROOT = Path(__file__).resolve().parents[2]


def _extras() -> dict[str, list[str]]:
    """pyproject.toml's extras (Python 3.10 has no tomllib: read the one table by hand)."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    table = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return {
        name: re.findall(r'"([^"]+)"', value)
        for name, value in re.findall(r"^(\w+)\s*=\s*(\[.*\])$", table, flags=re.MULTILINE)
    }


EXTRAS = _extras()


def _hub() -> None:
    from kaoshi.data.hub import _load_dataset

    _load_dataset()


def _plot() -> None:
    from kaoshi.report.plot import _matplotlib

    _matplotlib()


def _metrics() -> None:
    from kaoshi.scoring.text_metrics import _require

    _require("jieba")


def _api() -> None:
    from kaoshi.models import resolve_model

    resolve_model("openai:m", ModelOptions(base_url="http://127.0.0.1:9"))


def _hf() -> None:
    from kaoshi.models.hf_load import _import_torch

    _import_torch()


def _finetune(tmp_path: Path) -> None:
    from kaoshi.finetune.train import TrainSettings, finetune

    finetune("smollm2", tmp_path / "train.jsonl", tmp_path / "out", TrainSettings(), ModelOptions())


CASES: list[tuple[str, str, Callable[..., None]]] = [
    ("datasets", "datasets", _hub),
    ("matplotlib", "matplotlib", _plot),
    ("jieba", "jieba", _metrics),
    ("aiohttp", "aiohttp", _api),
    ("transformers", "transformers", _hf),
    ("peft", "peft", _finetune),
]


@pytest.mark.parametrize(("module", "package", "trigger"), CASES, ids=[c[0] for c in CASES])
def test_a_missing_library_names_the_extra_that_has_it(
    module: str, package: str, trigger: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    with pytest.raises((DataError, ModelError, ImportError, ValueError)) as caught:
        trigger(tmp_path) if trigger is _finetune else trigger()
    message = str(caught.value)
    named = re.findall(r"kaoshi\[([\w,]+)\]", message)
    assert named, message
    extras = named[0].split(",")
    assert all(extra in EXTRAS for extra in extras), message
    assert any(requirement.startswith(package) for extra in extras for requirement in EXTRAS[extra]), (
        f"{message!r}: none of {extras} installs {package}"
    )
