"""One run configuration: `kaoshi.RunConfig` (with the backend's `ModelOptions`) is what `kaoshi.evaluate`
takes, and `kaoshi run`'s options are generated from its fields, so each option is written once."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

import kaoshi
from kaoshi.cli.config_options import read_config
from kaoshi.cli.main import build_parser
from kaoshi.models import ModelOptions
from kaoshi.option_fields import CLI, option_fields
from kaoshi.runner.config import BACKEND_OPTIONS, RUN_OPTIONS, RunConfig

# `kaoshi run`'s options that are not the run's configuration: the exam, the model, where the run is kept
# and what is printed.
CLI_ONLY = {
    "help",
    "benchmark",
    "data",
    "split",
    "subjects",
    "on_invalid",
    "clean",
    "model",
    "run_name",
    "join",
    "report",
    "estimate",  # an action: what the run would send, nothing sent (kaoshi.api.costs.estimate_prepared)
    "price",  # what the tokens cost, shown; not a setting of the run (kaoshi.api.costs.Price)
    "max_cost",  # a stop, not a setting: the same command without it goes on
    "cache",  # which answers are asked, not what they are (kaoshi.runner.cache.CachePolicy)
    "cache_sampled",
    "cache_from",
    # how the requests travel (a provider's batch endpoint), not what they are (kaoshi.runner.batching)
    "batch",
    "batch_fallback",
    "batch_rounds",
    "batch_poll",
    "batch_max_lines",
    "batch_max_mb",
    "store",
}


def command(name: str) -> argparse.ArgumentParser:
    parser = build_parser([name])
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen: argparse.ArgumentParser = subparsers.choices[name]
    return chosen


def parse_run(*argv: str) -> argparse.Namespace:
    return command("run").parse_args(["--model", "random", *argv])


def test_every_config_field_is_a_run_option_and_every_run_option_a_field() -> None:
    generated = {option.dest_of(field.name): field.name for field, option in option_fields(RunConfig)}
    offered = {action.dest for action in command("run")._actions}
    assert offered - CLI_ONLY == set(generated)
    assert set(generated.values()) == (set(RUN_OPTIONS) - {"backend"}) | set(BACKEND_OPTIONS)
    # Every ModelOptions field is an option, and each option has one owner: no name is both the run's and
    # the backend's (seed, batch_size and adapter are the backend's: what the model is loaded with).
    assert all(CLI in f.metadata for f in dataclasses.fields(ModelOptions))
    assert not set(RUN_OPTIONS) & set(BACKEND_OPTIONS)
    assert {"seed", "batch_size", "adapter"} <= set(BACKEND_OPTIONS)


def test_the_parsed_command_line_is_a_run_config() -> None:
    assert read_config(RunConfig, parse_run()) == RunConfig()
    args = parse_run(
        *("--method", "loglik", "--no-chat", "--exemplars", "a, b,", "--exemplars-file", "x.jsonl"),
        *("--shard", "2/8", "--seed", "3", "--batch-size", "4", "--multi-policy", "f1"),
        *("--partial-credit", "0.25", "--standard-score", "数学=150", "--adapter", "lora"),
        *("--base-url", "http://a", "--base-url", "http://b", "--rpm", "30", "--timeout", "9"),
        *("--trust-remote-code", "--replicas", "2", "--llm-extractor", "random"),
    )
    assert read_config(RunConfig, args) == RunConfig(
        method="loglik",
        chat=False,
        exemplars=("a", "b"),
        exemplars_file=Path("x.jsonl"),
        shard=(2, 8),
        multi_policy="f1",
        partial_credit=0.25,
        standard_scores={"数学": 150.0},
        llm_extractor="random",
        backend=ModelOptions(
            seed=3,
            batch_size=4,
            adapter="lora",
            base_url=("http://a", "http://b"),
            requests_per_minute=30.0,
            timeout_s=9.0,
            trust_remote_code=True,
            replicas=2,
        ),
    )
    assert read_config(RunConfig, parse_run("--base-url", "http://a")).backend.base_url == "http://a"


def test_a_bad_value_names_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_run("--shard", "9/8")
    assert "argument --shard: --shard 9/8: I must be between 1 and N" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_run("--limit", "x")
    assert "argument --limit: invalid int value: 'x'" in capsys.readouterr().err


def test_help_fills_in_each_commands_default() -> None:
    run, rescore = command("run").format_help(), command("rescore").format_help()
    assert "(partial; default: 0.5)" in " ".join(run.split())
    assert "(partial; default: the source run's)" in " ".join(rescore.split())
    assert command("rescore").parse_args(["r", "--run-name", "n"]).partial_credit is None


def test_evaluate_with_a_config_equals_evaluate_with_keywords() -> None:
    config = kaoshi.RunConfig(method="loglik", limit=6, backend=ModelOptions(seed=3, dtype="float32"))
    by_config = kaoshi.evaluate("sample", "random", config, max_new_tokens_open=64, shard="1/2")
    by_keywords = kaoshi.evaluate(
        "sample",
        "random",
        method="loglik",
        seed=3,
        limit=6,
        dtype="float32",
        max_new_tokens_open=64,
        shard="1/2",
    )
    assert by_config.name == by_keywords.name
    assert by_config.spec == by_keywords.spec
    assert by_config.spec.model_settings == {"dtype": "float32"}
    assert by_config.spec.seed == 3  # the backend's seed is the run's
    assert [s.to_json() for s in by_config.samples] == [s.to_json() for s in by_keywords.samples]
    # An override wins over the config's value, the config is left as it was.
    assert len(kaoshi.evaluate("sample", "random", config, limit=2).samples) == 2 * 4  # 4 subjects
    assert config.limit == 6


def test_an_unknown_option_is_a_type_error_naming_the_known_ones() -> None:
    with pytest.raises(
        TypeError, match=r"unknown option 'methd' \(run options: .*method.*backend options: .*dtype"
    ):
        kaoshi.evaluate("sample", "random", methd="loglik")
    with pytest.raises(TypeError, match="unknown option 'methd'"):
        RunConfig().override(methd="loglik")


def test_the_config_takes_values_as_given_and_its_backend_holds_what_the_model_loads_with() -> None:
    config = RunConfig(exemplars=["q1"], exemplars_file="x.jsonl", shard="2/8")  # type: ignore[arg-type]
    assert (config.exemplars, config.exemplars_file, config.shard) == (("q1",), Path("x.jsonl"), (2, 8))
    changed = config.override(seed=5, batch_size=8, adapter=Path("lora"), device="cpu")
    loaded_with = changed.backend
    assert (loaded_with.seed, loaded_with.batch_size, loaded_with.adapter, loaded_with.device) == (
        5,
        8,
        "lora",
        "cpu",
    )
    # the run reads its seed and adapter from there: one value each
    assert (changed.seed, changed.adapter) == (5, Path("lora"))
    assert (config.seed, config.adapter, config.backend) == (0, None, ModelOptions())
