"""EchoLoglik's verdicts on failures, with a scripted `post` (no server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kaoshi.models import CapabilityError, LoglikRequest
from kaoshi.models.openai_loglik import EchoLoglik
from kaoshi.models.openai_replies import FinalFailure, RetriesExhausted

REQUEST = LoglikRequest("q", "第一题：", ("正确", "错误"))


def scripted(failure: FinalFailure) -> tuple[EchoLoglik, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def post(client: Any, path: str, body: dict[str, Any], *, retries: int | None = None) -> Any:
        sent.append(body)
        raise failure

    loglik = EchoLoglik("m", 0, post, "http://echo-gpu:8000/v1", str, prompts_per_request=1)
    return loglik, sent


def test_429s_until_the_retries_ran_out_are_the_questions_error_whatever_the_server_is_called() -> None:
    # "echo" in the server's name is not a refusal of echo: neither a switch to logprobs 1 nor the
    # one-line "cannot do log-likelihood" stop
    message = "HTTP 429 from http://echo-gpu:8000/v1: too many requests (retries ran out)"
    loglik, sent = scripted(RetriesExhausted(message))
    [output] = asyncio.run(loglik.score(None, [REQUEST]))
    assert output.error == message and output.logprobs is None
    assert loglik.top_alternatives == 0 and [body["logprobs"] for body in sent] == [0]


def test_a_4xx_refusing_logprobs_0_turns_the_run_to_1_before_it_stops_in_one_line() -> None:
    loglik, sent = scripted(FinalFailure("HTTP 400: 'logprobs' must be at least 1 with 'echo'"))
    with pytest.raises(CapabilityError, match=r"use --method generate$"):  # it refuses 1 too
        asyncio.run(loglik.score(None, [REQUEST]))
    assert [body["logprobs"] for body in sent] == [0, 1] and loglik.top_alternatives == 1
