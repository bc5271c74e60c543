"""The OpenAI-compatible backend against a local fake server that injects faults."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from kaoshi.cli.main import main
from kaoshi.models import GenerateRequest, LoglikRequest, ModelError, ModelOptions, resolve_model
from kaoshi.models.retry import Backoff, parse_retry_after
from tests.support.fake_openai import FakeOpenAI


def model_for(server: FakeOpenAI, **kw: object):  # type: ignore[no-untyped-def]
    options = ModelOptions(base_url=server.base_url, **kw)  # type: ignore[arg-type]
    model = resolve_model("openai:test-model", options)
    model.backoff = Backoff(base_s=0.01, cap_s=0.05)  # keep the test fast
    return model


def chat(qid: str, text: str) -> GenerateRequest:
    return GenerateRequest(qid, text, messages=(("user", text),), max_new_tokens=16)


def test_generation_chat_and_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    with FakeOpenAI(answers={"二氧化碳": "答案：C"}) as server:
        model = model_for(server)
        outputs = {
            o.id: o for o in model.generate([chat("a", "灭火用二氧化碳？"), GenerateRequest("b", "plain")])
        }
    assert outputs["a"].text == "答案：C" and outputs["b"].text == "答案：A"
    assert outputs["a"].tokens_in == len("灭火用二氧化碳？") and outputs["a"].latency_s is not None
    assert {tuple(sorted(b)) for b in server.bodies} == {
        ("max_tokens", "messages", "model", "seed", "temperature"),
        ("max_tokens", "model", "prompt", "seed", "temperature"),
    }
    assert all(h["authorization"] == "Bearer sk-secret-123" for h in server.headers)


def test_retries_then_success_and_final_errors() -> None:
    faults = {
        "q429": ["429:0.05", "429"],
        "q500": ["500", "502"],
        "qbad": ["badjson"],
        "qhang": ["hang"],
        "qempty": ["empty"],
        "qdead": ["503"] * 10,
        "q400": ["400"],
    }
    # A 1 s timeout against a 5 s hang: wide enough that an ordinary reply on a loaded machine is never
    # timed out (and retried) by mistake, which would change the counts below.
    with FakeOpenAI(faults=faults, hang_s=5.0) as server:
        model = model_for(server, timeout_s=1.0, max_retries=3)
        started = time.monotonic()
        outputs = {o.id: o for o in model.generate([chat(k, k) for k in faults])}
        elapsed = time.monotonic() - started
    for ok in ("q429", "q500", "qbad", "qhang"):
        assert outputs[ok].error is None and outputs[ok].text == "答案：A", outputs[ok]
    assert outputs["qempty"].error == "the response has no choices"
    assert outputs["qdead"].error == "HTTP 503 (gave up after 4 attempts)"
    assert outputs["q400"].error is not None and outputs["q400"].error.startswith("HTTP 400:")
    assert server.attempts["q429"] == 3 and server.attempts["q500"] == 3 and server.attempts["qdead"] == 4
    assert server.attempts["qempty"] == 1 and server.attempts["q400"] == 1  # not retried
    assert model.stats.retries == 2 + 2 + 1 + 1 + 3 and model.stats.failures == 3
    assert elapsed < 5  # the hang was cut by the timeout, not waited out


def test_retry_after_is_honoured() -> None:
    with FakeOpenAI(faults={"slow": ["429:0.6"]}) as server:
        model = model_for(server)
        started = time.monotonic()
        [output] = list(model.generate([chat("slow", "slow")]))
    assert output.error is None and time.monotonic() - started >= 0.6
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None


def test_concurrency_is_bounded_and_used() -> None:
    with FakeOpenAI(latency_s=0.05) as server:
        model = model_for(server, concurrency=4)
        started = time.monotonic()
        outputs = list(model.generate([chat(f"q{i}", f"q{i}") for i in range(16)]))
        elapsed = time.monotonic() - started
    assert len(outputs) == 16 and server.max_in_flight == 4
    assert elapsed < 16 * 0.05 / 2  # far faster than one at a time


def test_requests_per_minute_limit() -> None:
    with FakeOpenAI() as server:
        model = model_for(server, concurrency=8, requests_per_minute=600)  # one request per 0.1 s
        started = time.monotonic()
        list(model.generate([chat(f"q{i}", f"q{i}") for i in range(5)]))
    assert time.monotonic() - started >= 0.4


def test_chat_loglik_reads_top_logprobs_in_one_request() -> None:
    # Plain prompts are scored whole from echoed prompt log-probabilities (test_openai_loglik.py).
    with FakeOpenAI() as server:
        model = model_for(server)
        requests = [LoglikRequest("c", "题", ("A", "B", "C", "D", "正确"), messages=(("user", "题"),))]
        outputs = {o.id: o for o in model.loglikelihood(requests)}
    assert len(server.bodies) == 1
    assert outputs["c"].logprobs == {
        "A": -0.2,
        "B": -1.9,
        "C": -2.5,
        "D": -4.0,
    }  # ' C' matches C; 正确 absent
    chat_body = next(b for b in server.bodies if "messages" in b)
    assert chat_body["max_tokens"] == 1 and chat_body["logprobs"] is True and chat_body["top_logprobs"] == 20


def test_no_key_for_the_real_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ModelError, match="no API key: set OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o")


def test_cli_run_stores_errors_and_never_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MY_KEY", "sk-never-store-me")
    store = tmp_path / "s.sqlite"
    # the first sample question's stem; its requests always fail
    with FakeOpenAI(faults={"扑救电气设备初起火灾": ["500"] * 10}, answers={"安全色": "答案：A"}) as server:
        code = main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                "openai:test-model",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "MY_KEY",
                "--max-retries",
                "1",
                "--limit-total",
                "6",
                "--run-name",
                "api",
                "--store",
                str(store),
            ]
        )
        assert code == 0
        assert all(h["authorization"] == "Bearer sk-never-store-me" for h in server.headers)
    capsys.readouterr()
    assert main(["report", "api", "--format", "json", "--store", str(store)]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    assert report["errors"] == 1 and report["n"] == 6
    for path in tmp_path.iterdir():
        assert b"sk-never-store-me" not in path.read_bytes()
