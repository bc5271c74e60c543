"""What a hostile OpenAI-compatible server still broke (issue 28): each bad reply is one sample's error or a
retry, never a crash of the run, never an answer the model did not give, never a credential stored."""

from __future__ import annotations

import base64
import time
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from kaoshi.cli.main import main
from kaoshi.models import (
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
    resolve_model,
)
from kaoshi.models.retry import Backoff
from kaoshi.models.secrets import url_secrets
from kaoshi.store import Store
from tests.support.fake_openai import FakeOpenAI

KEY = "sk-hostile-key-0123456789"
FIRST_STEM = "扑救电气设备初起火灾"  # the sample exam's first question


def model_for(url: str, **kw: object) -> Model:
    model = resolve_model("openai:test-model", ModelOptions(base_url=url, **kw))  # type: ignore[arg-type]
    model.backoff = Backoff(base_s=0.01, cap_s=0.05)  # type: ignore[attr-defined]  # keep the test fast
    return model


def ask(model: Model, chat: bool = True) -> ModelOutput:
    messages = (("user", "题"),) if chat else None
    [output] = list(model.generate([GenerateRequest("q", "题", max_new_tokens=8, messages=messages)]))
    return output


def run_sample(url: str, store: Path, *extra: str) -> int:
    return main(
        ["run", "--benchmark", "sample", "--model", "openai:test-model", "--base-url", url,
         "--limit-total", "6", "--max-retries", "1", "--run-name", "r", "--store", str(store), *extra]
    )  # fmt: skip


# -- 1: a reply nested 100,000 levels deep ------------------------------------------------------------


def test_a_deeply_nested_reply_is_retried_then_an_error_sample_not_a_crash() -> None:
    with FakeOpenAI(faults={"题": ["deep"] * 5}) as server:
        output = ask(model_for(server.base_url, max_retries=1))
    assert output.error == (
        "the response body nests more than 64 levels deep, not an API reply (gave up after 2 attempts)"
    )
    assert server.attempts["题"] == 2


def test_a_run_meeting_a_deeply_nested_reply_completes_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(faults={FIRST_STEM: ["deep", "bignum"]}) as server:
        assert run_sample(server.base_url, store) == 0
        assert "6 new, 0 already stored, 1 error(s)" in capsys.readouterr().err
        assert run_sample(server.base_url, store) == 0
    assert "1 new, 5 already stored, 0 error(s)" in capsys.readouterr().err


# -- 4: credentials in the base URL ---------------------------------------------------------------------


def basic(user_password: str) -> str:
    return "Basic " + base64.b64encode(user_password.encode()).decode()


def test_userinfo_in_the_base_url_is_sent_as_basic_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI() as server:
        output = ask(model_for(server.base_url.replace("//", "//bob:pw%40secret@")))
    assert output.error is None
    assert server.headers[0]["authorization"] == basic("bob:pw@secret")
    assert server.paths == ["/v1/chat/completions"]


def test_userinfo_wins_over_the_api_key_for_its_endpoint_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI() as guarded, FakeOpenAI() as plain:
        model = model_for((guarded.base_url.replace("//", "//bob:pw-secret@"), plain.base_url))
        outputs = list(
            model.generate([GenerateRequest(f"q{i}", f"题{i}", max_new_tokens=4) for i in range(8)])
        )
    assert [o.error for o in outputs] == [None] * 8
    assert guarded.headers and plain.headers
    assert {h["authorization"] for h in guarded.headers} == {basic("bob:pw-secret")}
    assert {h["authorization"] for h in plain.headers} == {f"Bearer {KEY}"}


def test_query_parameters_stay_query_parameters_on_every_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    query = "api-key=q-secret-77&api-version=2024-06-01"
    with FakeOpenAI() as server:
        model = model_for(f"{server.base_url}/?{query}")
        assert ask(model, chat=True).error is None and ask(model, chat=False).error is None
        [scored] = list(model.loglikelihood([LoglikRequest("l", "题", ("A", "B"), (("user", "题"),))]))
    assert scored.error is None
    chat, completion = f"/v1/chat/completions?{query}", f"/v1/completions?{query}"
    assert server.paths == [chat, completion, chat]


def test_a_password_is_masked_as_given_and_as_sent() -> None:
    assert set(url_secrets("http://bob:pw%40secret@h/v1?api-key=k%2B1")) == {
        "bob", "pw%40secret", "pw@secret", "k+1"
    }  # fmt: skip


@pytest.mark.parametrize("url", ["ftp://h/v1", "http:///v1", "http://h:99999/v1", "http://u:p@h:port/v1"])
def test_a_base_url_that_is_no_http_address_is_refused_in_one_line(url: str) -> None:
    with pytest.raises(ModelError, match=r"--base-url must be an http\(s\) URL with a host, got") as caught:
        model_for(url)
    assert ":p@" not in str(caught.value)


def test_credentials_in_the_base_url_are_never_printed_or_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TEST_KEY", KEY)
    store = tmp_path / "s.sqlite"
    faults = {FIRST_STEM: ["keyecho"], "安全色": ["echo"] * 3}
    with FakeOpenAI(faults=faults) as server:
        url = server.base_url.replace("//", "//bob:pw-secret-1@") + "?api-key=k-secret-2"
        assert run_sample(url, store, "--api-key-env", "TEST_KEY") == 0
        assert {h["authorization"] for h in server.headers} == {basic("bob:pw-secret-1")}
    assert main(["samples", "r", "--format", "jsonl", "--store", str(store)]) == 0
    assert main(["runs", "--format", "json", "--store", str(store)]) == 0
    printed = capsys.readouterr()
    shown = printed.out + printed.err
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*"))
    with Store(store) as opened:
        samples = {s.question_id: s for s in opened.samples("r")}
    assert samples["s-safe-1"].response == "答案：A（请求头 ***；参数 api-key=***）"
    assert "api-key=***" in shown and "Header was: Basic ***" in shown
    for secret in (KEY, "pw-secret-1", "k-secret-2", basic("bob:pw-secret-1").split()[1]):
        assert secret not in shown and secret.encode() not in stored


# -- 7: a cap on a reply's size -------------------------------------------------------------------------


def test_a_reply_text_over_the_limit_is_an_error_sample_not_an_answer() -> None:
    with FakeOpenAI(faults={"题": ["huge:5000"]}) as server:
        output = ask(model_for(server.base_url, max_reply_chars=1000))
    assert output.error == (
        "the reply's message.content holds 5,004 characters, over the limit of 1,000 (--max-reply-chars)"
    )
    assert (
        output.text is None and output.tokens_in == 1 and server.attempts["题"] == 1
    )  # cost kept, not retried


def test_the_default_limit_refuses_a_20_million_character_reply_unread() -> None:
    with FakeOpenAI(faults={"题": ["huge:20000000"]}) as server:
        started = time.perf_counter()
        output = ask(model_for(server.base_url))
    assert output.error == (
        "the reply is over 16,000,000 bytes, the most --max-reply-chars 500,000 allows; not read further"
    )
    assert time.perf_counter() - started < 30 and server.attempts["题"] == 1


def test_a_body_without_a_length_is_read_no_further_than_the_limit() -> None:
    with FakeOpenAI(faults={"题": ["stream:200000000"]}) as server:
        output = ask(model_for(server.base_url, max_reply_chars=1000, timeout_s=20))
    assert output.error == (
        "the reply is over 32,000 bytes, the most --max-reply-chars 1,000 allows; not read further"
    )
    assert server.stream_bytes_sent < 50_000_000  # the client hung up at the cap, not at the end


def test_max_reply_chars_is_an_option_and_a_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ModelError, match="--max-reply-chars must be > 0, got 0"):
        ModelOptions(max_reply_chars=0)
    code = main(["run", "--benchmark", "sample", "--model", "random", "--max-reply-chars", "0",
                 "--store", str(tmp_path / "s")])  # fmt: skip
    assert (code, capsys.readouterr().err.strip()) == (2, "error: --max-reply-chars must be > 0, got 0")
    with FakeOpenAI(faults={FIRST_STEM: ["huge:200"]}) as server:
        assert run_sample(server.base_url, tmp_path / "s.sqlite", "--max-reply-chars", "100") == 0
    with Store(tmp_path / "s.sqlite") as store:
        errors = [s.error for s in store.samples("r") if s.status == "error"]
    assert errors == [
        "the reply's message.content holds 204 characters, over the limit of 100 (--max-reply-chars)"
    ]


# -- 10: a key echoed inside a successful reply ---------------------------------------------------------


def test_a_key_echoed_in_a_successful_reply_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI(faults={"题": ["keyecho", "keyecho"]}) as server:
        assert ask(model_for(server.base_url)).text == "答案：A（请求头 ***；参数 ）"
        with_query = model_for(f"{server.base_url}?api-key=q-secret-77")
        assert ask(with_query, chat=False).text == "答案：A（请求头 ***；参数 api-key=***）"


def test_only_the_credentials_are_masked_in_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    text = "Basic understanding: token abcdefgh12345678, api_key=example1. 答案：A"
    with FakeOpenAI(answers={"题": text}) as server:
        assert ask(model_for(server.base_url)).text == text  # error text's patterns would mangle it


# -- an error object in a 2xx reply; a reply cut at the token limit -------------------------------------


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (["error"] * 3, "the server replied with an error: scripted error object (gave up after 2 attempts)"),
        (
            ["vllm:503"] * 3,
            "the server replied with an error: scripted vllm error (gave up after 2 attempts)",
        ),
        (["vllm:500", "error"], None),
    ],
)
def test_an_error_object_in_a_200_reply_is_retried(fault: list[str], error: str | None) -> None:
    with FakeOpenAI(faults={"题": fault}) as server:
        output = ask(model_for(server.base_url, max_retries=1 if error else 2))
    assert output.error == error
    assert output.text == (None if error else "答案：A")
    assert server.attempts["题"] == (2 if error else 3)


@pytest.mark.parametrize("chat", [True, False])
def test_a_reply_cut_at_the_token_limit_is_marked_truncated(chat: bool) -> None:
    with FakeOpenAI(faults={"题": ["length"]}) as server:
        model = model_for(server.base_url)
        cut, whole = ask(model, chat), ask(model, chat)
    assert (cut.text, cut.error, cut.truncated) == ("答案：A", None, True)
    assert (whole.text, whole.truncated) == ("答案：A", False)


def test_the_fake_server_is_bounded_in_requests_and_time() -> None:
    with FakeOpenAI(max_requests=2) as server:
        model = model_for(server.base_url, max_retries=0, timeout_s=5)
        assert [ask(model).error for _ in range(3)] == [
            None,
            None,
            "the server closed the connection without replying (ServerDisconnectedError: Server "
            "disconnected) (gave up after 1 attempt)",
        ]
    with FakeOpenAI(max_seconds=0.2) as server:
        time.sleep(0.5)
        error = ask(model_for(server.base_url, max_retries=0)).error or ""
    assert error.startswith(
        f"could not connect (ClientConnectorError: Cannot connect to host 127.0.0.1:{server.port}"
    )
    assert error.endswith("(gave up after 1 attempt)")
