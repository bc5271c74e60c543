"""Hardening (issue 18): no secret stored or printed, flags that would turn safeguards off are refused,
Retry-After waits are capped, a closed pipe ends quietly, and a bug says it is one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import kaoshi
from kaoshi.cli.main import main
from kaoshi.models import GenerateRequest, ModelError, ModelOptions, resolve_model
from kaoshi.models.retry import Backoff
from kaoshi.models.secrets import redact, strip_credentials
from tests.support.fake_openai import FakeOpenAI

KEY = "sk-test-0123456789abcdef"

pytest.importorskip("aiohttp")


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("https://bob:hunter22@api.example.com/v1", "https://***@api.example.com/v1"),
        (
            "https://api.example.com/v1?api-key=abc123&deployment=x",
            "https://api.example.com/v1?api-key=***&deployment=x",
        ),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("https://token@host/v1?sig=zz9&x=1", "https://***@host/v1?sig=***&x=1"),
    ],
)
def test_credentials_are_stripped_from_urls(url: str, stored: str) -> None:
    assert strip_credentials(url) == stored


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"Incorrect API key provided: {KEY}.", "Incorrect API key provided: ***."),
        ("Authorization: Bearer abcdefgh12345678", "Authorization: *** ***"),
        ("bad request: api_key=zz99yy88 expired", "bad request: api_key=*** expired"),
        ('{"x-api-key": "qwertyuiop"}', '{"x-api-key": "***"}'),
        ("HTTP 429: slow down", "HTTP 429: slow down"),  # nothing secret, nothing changed
    ],
)
def test_redaction(text: str, shown: str) -> None:
    assert redact(text, [KEY]) == shown


def test_a_key_echoed_by_the_server_is_never_stored_or_printed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("TEST_KEY", KEY)
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(faults={"题": ["echo"] * 100}) as server:
        url = server.base_url
        code = main(
            ["run", "--benchmark", "sample", "--model", "openai:m", "--base-url", url,
             "--api-key-env", "TEST_KEY", "--limit", "2", "--max-retries", "0", "--run-name", "r",
             "--store", str(store)]
        )  # fmt: skip
    assert code == 0
    assert main(["samples", "r", "--format", "jsonl", "--store", str(store)]) == 0
    assert main(["runs", "--format", "json", "--store", str(store)]) == 0
    printed = capsys.readouterr()
    assert "Incorrect API key provided: ***" in printed.out
    stored = store.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite-*"))
    assert KEY not in printed.out + printed.err and KEY.encode() not in stored


def test_credentials_in_the_endpoint_never_reach_the_run_spec(tmp_path: Path) -> None:
    url = "https://bob:pw-secret-1@api.example.com/v1?api-key=k-secret-2"
    result = kaoshi.evaluate("sample", model="random", base_url=url, limit=1, store=tmp_path / "s.sqlite")
    assert result.spec.model_settings["base_url"] == "https://***@api.example.com/v1?api-key=***"
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*"))
    assert b"pw-secret-1" not in stored and b"k-secret-2" not in stored


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--timeout", "0", "--timeout must be > 0, got 0"),
        ("--timeout", "-1", "--timeout must be > 0, got -1"),
        ("--max-retries", "-1", "--max-retries must be >= 0, got -1"),
        ("--rpm", "-5", "--rpm must be > 0, got -5"),
        ("--concurrency", "0", "--concurrency must be > 0, got 0"),
        ("--max-wait", "nan", "--max-wait must be > 0, got nan"),
        ("--batch-size", "0", "--batch-size must be > 0, got 0"),
    ],
)
def test_flags_that_would_turn_safeguards_off_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, value: str, message: str
) -> None:
    code = main(
        ["run", "--benchmark", "sample", "--model", "random", flag, value, "--store", str(tmp_path / "s")]
    )
    assert (code, capsys.readouterr().err.strip()) == (2, f"error: {message}")
    assert not (tmp_path / "s").exists()  # refused before anything was made


def test_model_options_refuse_the_same_values_from_python() -> None:
    with pytest.raises(ModelError, match="--timeout must be > 0"):
        ModelOptions(timeout_s=0)
    with pytest.raises(ModelError, match="--max-retries must be >= 0"):
        ModelOptions(max_retries=-1)
    with pytest.raises(ModelError, match="--rpm must be > 0"):
        kaoshi.evaluate("sample", model="random", requests_per_minute=-5)


def test_retry_after_waits_are_capped_and_the_cap_is_stated() -> None:
    with FakeOpenAI(faults={"题": ["429:30", "429:30"]}) as server:
        model = resolve_model(
            "openai:m", ModelOptions(base_url=server.base_url, max_retries=1, max_wait_s=0.2)
        )
        model.backoff = Backoff(base_s=0.01, cap_s=0.05)  # type: ignore[attr-defined]
        started = time.perf_counter()
        [output] = list(model.generate([GenerateRequest("q", "题", max_new_tokens=4)]))
    assert time.perf_counter() - started < 5
    assert output.error == (
        "HTTP 429 (gave up after 2 attempts; the server asked to wait 30 s, capped at 0.2 s (--max-wait))"
    )
    assert Backoff().delay(0, __import__("random").Random(0), retry_after=900.0, max_wait_s=720.0) == 600.0


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model="random", store=store, run_name="r")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    command = f"{sys.executable} -m kaoshi.cli.main samples r --format jsonl --store {store} | head -c 10"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, env=env)
    assert (done.returncode, done.stderr) == (0, "")
    assert len(done.stdout) == 10


def test_a_bug_is_reported_as_one_with_its_traceback_behind_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model="random", store=store, run_name="r", limit=2)

    def broken(**_: object) -> None:
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")

    monkeypatch.setattr("kaoshi.cli.inspect_cmds.runs", broken)
    assert main(["runs", "--store", str(store)]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "internal error, please report it: TypeError: unsupported operand type(s) for +: 'int' and 'str' "
        "(run with --debug for the traceback)"
    )
    assert main(["--debug", "runs", "--store", str(store)]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in broken" in err


def test_a_value_error_from_a_bug_is_not_bad_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Only kaoshi's own input errors exit 2; a ValueError or KeyError raised by a bug exits 1."""
    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model="random", store=store, run_name="r", limit=2)
    for bug in (ValueError("invalid literal for int() with base 10: 'x'"), KeyError("domain")):

        def broken(**_: object) -> None:
            raise bug  # noqa: B023

        monkeypatch.setattr("kaoshi.cli.inspect_cmds.runs", broken)
        assert main(["runs", "--store", str(store)]) == 1
        assert capsys.readouterr().err.startswith("internal error, please report it: ")
    assert main(["report", "nope", "--store", str(store)]) == 2
    assert main(["prompt", "show", "--benchmark", "sample", "--question", "zz"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "error: no question 'zz' in exam 'sample'"


def test_a_template_reaching_outside_its_values_is_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    template = tmp_path / "code.j2"
    template.write_text("{{ question.__class__.__mro__ }}", encoding="utf-8")
    code = main(
        ["prompt", "show", "--benchmark", "sample", "--question", "s-safe-1", "--prompt", f"file:{template}"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith(f"error: {template}: the prompt template reaches outside the values")
