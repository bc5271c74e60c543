"""The public API: `kaoshi.evaluate` and `kaoshi.summarize` give what `kaoshi run`, `report` and `samples`
give for the same options, resume the same runs, and take any callable as a backend."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.models import CapabilityError
from kaoshi.store import Store, StoreError
from tests.support.runs import cli, cli_report


def cli_samples(capsys: pytest.CaptureFixture[str], store: Path, name: str) -> list[dict[str, Any]]:
    out = cli(capsys, "samples", name, "--format", "jsonl", "--store", str(store))
    return [json.loads(line) for line in out.splitlines()]


def test_evaluate_equals_kaoshi_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    by_cli, by_api = tmp_path / "cli.sqlite", tmp_path / "api.sqlite"
    options = ["--model", "random", "--seed", "7", "--max-new-tokens-open", "64", "--limit", "3"]
    cli(capsys, "run", "--benchmark", "sample", *options, "--store", str(by_cli))
    result = kaoshi.evaluate(
        kaoshi.load_exam("sample"), model="random", seed=7, max_new_tokens_open=64, limit=3, store=by_api
    )
    with Store(by_cli) as store:
        [run] = store.runs()
    assert result.name == run.name == "sample-random-generate-limit3"  # the same default name
    assert result.spec == run.spec  # the same spec: either resumes the other's run
    assert [s.to_json() for s in result.samples] == cli_samples(capsys, by_cli, run.name)
    assert result.summary.to_json() == cli_report(capsys, by_cli, run.name)
    assert kaoshi.summarize(run.name, store=by_api).to_json() == result.summary.to_json()
    assert (result.new_samples, result.already_done, result.errors) == (12, 0, 0)  # 3 of 4 subjects
    assert result.store == by_api
    # The API resumes the command's run: nothing is asked again.
    again = kaoshi.evaluate(
        kaoshi.load_exam("sample"), model="random", seed=7, max_new_tokens_open=64, limit=3, store=by_cli
    )
    assert (again.new_samples, again.already_done) == (0, 12)


def test_a_callable_is_a_backend_and_the_store_defaults_to_memory() -> None:
    prompts: list[Any] = []

    def always_a(prompt: Any) -> str:
        prompts.append(prompt)
        return "答案：A"

    result = kaoshi.evaluate("sample", model=always_a, limit_total=6)
    assert result.store is None  # in memory, gone with the result
    assert re.fullmatch(
        r"function:tests\.integration\.test_api\.test_a_callable_is_a_backend_and_the_store_defaults_to_memory"
        r"\.<locals>\.always_a#[0-9a-f]{8}",
        result.spec.model,
    )
    assert len(prompts) == 6 and all(isinstance(p, str) for p in prompts)
    single = [s for s in result.samples if s.qtype == "single"]
    assert single and all(s.answer == frozenset("A") for s in single)
    assert result.summary.overall.accuracy == pytest.approx(
        sum(bool(s.correct) for s in result.samples if s.correct is not None)
        / sum(s.correct is not None for s in result.samples)
    )
    assert "accuracy=" in repr(result)


def test_a_chat_run_hands_the_callable_messages() -> None:
    seen: list[Any] = []

    def reply(messages: Any) -> str:
        seen.append(messages)
        return "答案：B"

    kaoshi.evaluate("sample", model=reply, chat=True, system="你是考生。", limit_total=2)
    assert len(seen) == 2 and all(isinstance(m, list) for m in seen)
    assert seen[0][0]["role"] == "system" and seen[0][0]["content"].startswith("你是考生。")
    assert seen[0][-1]["role"] == "user" and "题目" in seen[0][-1]["content"]


def test_a_failing_callable_leaves_errors_that_resume_retries(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    calls = {"n": 0}

    def flaky(prompt: Any) -> Any:
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            raise ConnectionError("the server went away")
        return None if calls["n"] == 4 else "答案：A"

    first = kaoshi.evaluate("sample", model=flaky, limit_total=9, store=store, run_name="flaky")
    errors = [s for s in first.samples if s.status == "error"]
    assert first.errors == len(errors) == 4
    assert "ConnectionError: the server went away" in {s.error for s in errors}
    assert "the function returned NoneType, not the answer text (str)" in {s.error for s in errors}

    def steady(prompt: Any) -> str:
        return "答案：A"

    # Another function is another model: refused before anything is asked.
    with pytest.raises(StoreError, match="model"):
        kaoshi.evaluate("sample", model=steady, limit_total=9, store=store, run_name="flaky")
    calls["n"] = 100  # flaky now answers 101, 102 (then would fail on 102 % 3 == 0: 102 is)
    resumed = kaoshi.evaluate("sample", model=flaky, limit_total=9, store=store, run_name="flaky")
    assert resumed.already_done == 5 and resumed.new_samples == 4


def test_a_callable_cannot_score_log_likelihoods() -> None:
    with pytest.raises(CapabilityError, match="cannot do --method loglik"):
        kaoshi.evaluate("sample", model=lambda prompt: "A", method="loglik", limit=2)


def test_ctrl_c_saves_what_was_answered_and_the_same_call_resumes(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    asked: list[str] = []

    def interrupted_at_four(prompt: Any) -> str:
        asked.append(prompt)
        if len(asked) == 4:
            raise KeyboardInterrupt
        return "答案：A"

    with pytest.raises(kaoshi.api.RunInterrupted) as stopped:
        kaoshi.evaluate("sample", model=interrupted_at_four, limit_total=8, store=store, run_name="r")
    assert (stopped.value.name, stopped.value.saved, stopped.value.store) == ("r", 3, store)
    assert isinstance(stopped.value, KeyboardInterrupt)  # a notebook's interrupt stays an interrupt
    result = kaoshi.evaluate("sample", model=interrupted_at_four, limit_total=8, store=store, run_name="r")
    assert (result.already_done, result.new_samples) == (3, 5)


def test_options_are_checked_with_the_option_named() -> None:
    with pytest.raises(TypeError, match=r"unknown option 'devise'.*device"):
        kaoshi.evaluate("sample", model="random", devise="cpu")
    with pytest.raises(ValueError, match="--limit must be > 0"):
        kaoshi.evaluate("sample", model="random", limit=0)
    with pytest.raises(ValueError, match="unknown method 'vote'"):
        kaoshi.evaluate("sample", model="random", method="vote")
    with pytest.raises(ValueError, match="--partial-credit"):
        kaoshi.evaluate("sample", model="random", partial_credit=2)

    class LooksLikeATransformersModel:
        config = "a transformers model has one"

        def generate(self) -> None: ...

        def __call__(self) -> None: ...

    with pytest.raises(TypeError, match=r"from_transformers\(model, tokenizer\)"):
        kaoshi.evaluate("sample", model=LooksLikeATransformersModel())


def test_backend_options_reach_the_backend_and_the_spec(tmp_path: Path) -> None:
    result = kaoshi.evaluate(
        "sample", model="random", limit=2, dtype="float32", max_length=4096, store=tmp_path / "s.sqlite"
    )
    assert result.spec.model_settings == {"dtype": "float32", "max_length": 4096}


def test_to_pandas_has_a_row_per_sample() -> None:
    pytest.importorskip("pandas")
    frame = kaoshi.evaluate("sample", model="random", limit_total=5).to_pandas()
    assert len(frame) == 5 and {"id", "type", "gold", "answer", "correct", "status"} <= set(frame.columns)


def test_importing_kaoshi_imports_only_what_is_used() -> None:
    code = (
        "import sys, kaoshi; before = {m for m in sys.modules if m.startswith('kaoshi.')}; "
        "kaoshi.evaluate; print(sorted(before), 'kaoshi.api' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"
    # Every public name resolves to the object its module defines (dir() lists __all__'s names by
    # construction, so comparing the two would prove nothing).
    for name in kaoshi.__all__:
        value = getattr(kaoshi, name)
        assert value is not None, name
        if name != "__version__":
            module = getattr(value, "__module__", None)
            assert module is None or module.startswith("kaoshi"), (name, module)
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        kaoshi.evaluat  # noqa: B018


def test_two_lambdas_never_share_stored_answers(tmp_path: Path) -> None:
    """Every lambda is `<lambda>`: the spec holds a hash of the code, so another lambda is another model."""
    store = tmp_path / "s.sqlite"
    first = kaoshi.evaluate("sample", model=lambda prompt: "答案：A", store=store)
    second = kaoshi.evaluate("sample", model=lambda prompt: "答案：B", store=store)
    assert first.spec.model != second.spec.model and second.new_samples == 44
    again = kaoshi.evaluate("sample", model=lambda prompt: "答案：A", store=store)  # the same code
    assert again.name == first.name and again.new_samples == 0
