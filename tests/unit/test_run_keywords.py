"""`kaoshi.evaluate`'s and `kaoshi.load_model`'s options by keyword are typed (kaoshi.runner.keywords): the
typed keywords are the fields of RunConfig and ModelOptions, with their types, and mypy names a misspelled
or mistyped option; at run time a misspelled one is a TypeError naming the close ones."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.models import ModelOptions
from kaoshi.runner.config import BACKEND_OPTIONS, RUN_OPTIONS, RunConfig
from kaoshi.runner.keywords import BackendKeywords, RunKeywords

ROOT = Path(__file__).resolve().parents[2]

# Where a keyword takes more than its field keeps (RunConfig.__post_init__, ModelOptions.__post_init__):
# (the field's type, the keyword's). Every other keyword has its field's type exactly.
WIDENED: dict[str, tuple[object, object]] = {
    "exemplars": (tuple[str, ...], Sequence[str]),
    "exemplars_file": (Path | None, str | Path | None),
    "shard": (tuple[int, int] | None, tuple[int, int] | str | None),  # "I/N"
    "adapter": (str | None, str | Path | None),  # kept as a str, as the backends read it
}


def field_types(config: type[object]) -> dict[str, object]:
    hints = typing.get_type_hints(config)
    return {field.name: hints[field.name] for field in dataclasses.fields(config)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keywords", "fields"),
    [
        (BackendKeywords, field_types(ModelOptions)),
        (RunKeywords, {**field_types(RunConfig), **field_types(ModelOptions)}),
    ],
    ids=["load_model", "evaluate"],
)
def test_the_keywords_are_the_fields_with_their_types(keywords: Any, fields: dict[str, object]) -> None:
    typed = typing.get_type_hints(keywords)
    assert set(typed) == set(fields)  # a field added, renamed or removed changes the keywords with it
    for name, field_type in fields.items():
        if name in WIDENED:
            assert (field_type, typed[name]) == WIDENED[name], name
        else:
            assert typed[name] == field_type, name
    assert not keywords.__required_keys__  # every option may be left out


def test_each_option_has_one_owner() -> None:
    """No option is both the run's and the backend's: RunConfig.override places each by its name."""
    assert not set(RUN_OPTIONS) & set(BACKEND_OPTIONS)
    assert set(RUN_OPTIONS) == {field.name for field in dataclasses.fields(RunConfig)}
    assert set(BACKEND_OPTIONS) == {field.name for field in dataclasses.fields(ModelOptions)}


def test_a_misspelled_option_names_the_close_ones() -> None:
    with pytest.raises(
        TypeError,
        match=r"unknown option 'sed' \(run options: .*; backend options: .*\); did you mean 'seed'\?",
    ):
        kaoshi.evaluate("sample", "random", sed=1)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"unknown option 'sed' \(backend options: .*\); did you mean 'seed'\?$"
    ):
        kaoshi.load_model("random", sed=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"unknown option 'zzz' \(run options: .*\)$"):  # nothing close
        RunConfig().override(zzz=1)


CHECKED = """
import kaoshi
from kaoshi.models import ModelOptions
from pathlib import Path

kaoshi.evaluate("sample", "random", seed=1, limit=2, shard="1/2", adapter=Path("lora"), dtype="float32")
kaoshi.evaluate("sample", "random", kaoshi.RunConfig(), backend=ModelOptions(seed=1), exemplars=["q1"])
kaoshi.load_model("random", seed=1, batch_size=4, device="cpu")
kaoshi.evaluate("sample", "random", sed=1)  # line 9
kaoshi.evaluate("sample", "random", limit="3")  # line 10
kaoshi.load_model("random", sed=1)  # line 11
"""


def test_mypy_names_a_misspelled_or_mistyped_option(tmp_path: Path) -> None:
    """The installed mypy checks a caller's keywords (in about 2 s: it reads kaoshi's typed source)."""
    api = pytest.importorskip("mypy.api")  # the dev extra's
    snippet = tmp_path / "caller.py"
    snippet.write_text(CHECKED, encoding="utf-8")
    config = str(ROOT / "pyproject.toml")
    out, err, status = api.run(
        [str(snippet), "--config-file", config, "--cache-dir", str(tmp_path / "cache")]
    )
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1, out + err
    assert len(errors) == 3, out  # the right spellings (lines 5-7) pass
    assert (
        f'{snippet}:9: error: Unexpected keyword argument "sed" for "evaluate"; did you mean "seed"?' in out
    )
    assert f'{snippet}:10: error: Argument "limit" to "evaluate" has incompatible type "str"' in out
    assert f'{snippet}:11: error: Unexpected keyword argument "sed" for "load_model"' in out
