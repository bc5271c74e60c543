"""A server that fails every request (issue 40): finding out what it can do never serialises the run, a
dead server fails the run's questions in parallel within one set of retries, --max-wait caps a request's
retrying in all, and the run ends with one line saying what the server did."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

import kaoshi
from kaoshi.cli.main import main
from kaoshi.models import GenerateRequest, LoglikRequest, Model, ModelOptions, resolve_model
from kaoshi.models.retry import Backoff
from tests.support.fake_openai import FakeOpenAI

EVERYTHING = ""  # a fault key every prompt contains
QUESTIONS = [
    LoglikRequest(f"q{i}", f"第{i}题：甲乙丙丁是____\n答案：", ("A", "B", "C", "D")) for i in range(16)
]


def model_for(url: str, **kw: object) -> Model:
    model = resolve_model("openai:test-model", ModelOptions(base_url=url, **kw))  # type: ignore[arg-type]
    model.backoff = Backoff(base_s=0.01, cap_s=0.02)  # type: ignore[attr-defined]  # keep the test fast
    return model


def test_a_dead_server_fails_every_question_in_parallel_within_one_set_of_retries() -> None:
    """Before: the first request probed lists while every other waited, then sent its questions one by
    one with full retries, and so did each request after it: 16 questions took 292 s by default."""
    latency = 0.2
    with FakeOpenAI(latency_s=latency, faults={EVERYTHING: ["500"] * 10_000}) as server:
        model = model_for(server.base_url, prompts_per_request=8, concurrency=8, max_retries=3)
        started = time.perf_counter()
        outputs = list(model.loglikelihood(QUESTIONS))
        took = time.perf_counter() - started
    assert len(outputs) == 16 and all(o.error is not None for o in outputs)
    packs = 8  # two questions a request
    # the probe's list, its first question's list and first prompt, then each request with its
    # retries, side by side
    assert len(server.bodies) <= 3 + packs * (3 + 1)
    assert server.max_in_flight >= packs - 1
    assert took < (3 + 4) * latency + 2.0  # one probe and one set of retries deep, not 8 sets
    assert {o.error for o in outputs} >= {"a list of 8 prompts failed: HTTP 500 (gave up after 4 attempts)"}


def test_after_a_request_spent_its_retries_one_tries_while_the_others_wait_for_it() -> None:
    """On a dead server the first requests spend their retries side by side; after that one request
    (the scout) tries with its retries while the others wait, and they fail with it: not a full set of
    retries each, one after another."""
    with FakeOpenAI(latency_s=0.05, faults={"题": ["500"] * 10_000}) as server:
        model = model_for(server.base_url, max_retries=2, concurrency=4)
        asked = [GenerateRequest(f"q{i}", "题", max_new_tokens=4) for i in range(8)]
        errors = sorted(o.error or "" for o in model.generate(asked))
    assert errors.count("HTTP 500 (gave up after 3 attempts)") == 5  # the first four, and the scout
    waited = [
        e for e in errors if e.endswith("not sent: the server answered no request while another tried it")
    ]
    assert len(waited) == 3 and server.attempts["题"] == 4 * 3 + 3


def test_a_short_outage_costs_only_the_requests_that_spent_their_retries_in_it() -> None:
    """The server fails every request for its first second (asking to wait 0.3 s), then answers: the
    first round spends its retries in the outage, a scout tries again and is answered, and every other
    request goes on (before, each request after the first give-up was tried once, at once, and a run
    of 400 questions lost all 400)."""
    with FakeOpenAI(outage_s=1.0) as server:
        model = model_for(server.base_url, max_retries=2, concurrency=4)
        asked = [GenerateRequest(f"q{i}", "题", max_new_tokens=4) for i in range(200)]
        outputs = list(model.generate(asked))
    failed = [o for o in outputs if o.error is not None]
    assert len(failed) <= 4  # the first round's requests
    assert all(o.text == "答案：A" for o in outputs if o.error is None)


def test_a_busy_server_is_not_taken_for_a_dead_one() -> None:
    """429s say the server is alive and rationing: the next requests keep their retries."""
    with FakeOpenAI(faults={"题": ["429"] * 3 + ["429", "429"]}) as server:
        model = model_for(server.base_url, max_retries=2, concurrency=1)
        outputs = list(model.generate([GenerateRequest(f"q{i}", "题", max_new_tokens=4) for i in range(2)]))
    assert outputs[0].error == "HTTP 429 (gave up after 3 attempts)"
    assert outputs[1].error is None and server.attempts["题"] == 6


def test_max_wait_caps_a_requests_retrying_in_all() -> None:
    with FakeOpenAI(faults={"题": ["hang"] * 100}, hang_s=30) as server:
        model = model_for(server.base_url, max_retries=50, timeout_s=0.3, max_wait_s=1.0)
        started = time.perf_counter()
        [output] = list(model.generate([GenerateRequest("q", "题", max_new_tokens=4)]))
        took = time.perf_counter() - started
    assert took < 1.0 + 0.3 + 0.5
    assert (output.error or "").startswith("timed out after 0.3 s (gave up after ")
    assert (output.error or "").endswith(" attempts: 1 s, the most --max-wait allows)")


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("cut", "the connection closed before the reply's body was complete (ClientPayloadError: "),
        (
            "gzip",
            "the reply's body could not be decompressed as its Content-Encoding says (ClientPayloadError",
        ),
        ("drop", "the server closed the connection without replying (ServerDisconnectedError"),
    ],
)
def test_a_broken_body_is_named_for_what_the_server_did(fault: str, said: str) -> None:
    with FakeOpenAI(faults={"题": [fault] * 2}) as server:
        [output] = list(model_for(server.base_url, max_retries=1).generate([GenerateRequest("q", "题", 4)]))
    assert (output.error or "").startswith(said)
    assert (output.error or "").endswith("(gave up after 2 attempts)")


def test_the_run_ends_with_one_line_saying_what_the_server_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAI(faults={EVERYTHING: ["500"] * 10_000}) as server:
        code = main(
            ["run", "--benchmark", "sample", "--model", "openai:m", "--base-url", server.base_url,
             "--method", "loglik", "--limit-total", "6", "--max-retries", "0", "--run-name", "dead",
             "--store", str(tmp_path / "runs.sqlite"), "--no-report"]
        )  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().err.splitlines()
    said = [line for line in lines if line.startswith("errors: ")]
    assert said == ["errors: HTTP 500 (gave up after 1 attempt) (6 of 6); the same command asks them again"]


def test_error_causes_count_each_cause_once_however_it_reached_the_question() -> None:
    exam = kaoshi.load_exam("sample").limited(6)
    with FakeOpenAI(faults={EVERYTHING: ["500"] * 10_000}) as server:
        result = kaoshi.evaluate(
            exam, model="openai:m", method="loglik", chat=False, base_url=server.base_url, max_retries=1
        )
    assert result.error_causes() == [("HTTP 500 (gave up after 2 attempts)", 6)]


@pytest.mark.parametrize("method", ["generate", "loglik"])
def test_a_reply_naming_another_model_is_recorded_on_the_sample_and_named_once(
    method: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = kaoshi.load_exam("sample").limited(4)
    with FakeOpenAI(reply_model="cheap-model-2025") as server:
        result = kaoshi.evaluate(exam, model="openai:m", method=method, chat=False, base_url=server.base_url)
    assert {s.served_model for s in result.samples} == {"cheap-model-2025"}
    assert result.summary.served_models == {"cheap-model-2025": 4}
    with FakeOpenAI(openai_fields=True) as server:  # the reply names the model asked for
        result = kaoshi.evaluate(exam, model="openai:m", method=method, chat=False, base_url=server.base_url)
    assert {s.served_model for s in result.samples} == {None} and not result.summary.served_models
