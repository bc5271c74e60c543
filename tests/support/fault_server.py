"""A fake OpenAI-compatible server that fails a fixed share of requests with every bad reply kaoshi knows
of, and records what it meant: each question's answer and the fault, if any, served on each attempt.
Which attempts fail is drawn reproducibly (a hash of the seed, the question and the attempt number); the
faults are served in turn, so every kind comes up once enough requests have failed.

Loopback only and bounded like FakeOpenAI (`max_requests`, `max_seconds`).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_openai import FakeOpenAI

# What each fault must come to: "retried" within the run (an error sample only once the retries are
# spent), "final" (an error sample at once), "kept" (the answer stored all the same), "cut" (an empty
# answer cut off at the budget, stored as the model's answer: wrong).
SHARED_FAULTS = {
    **dict.fromkeys(
        ["429", "429:0.01", "500", "502", "521", "hang", "drop", "badjson", "html", "html:502"], "retried"
    ),
    **dict.fromkeys(["error", "error:503", "error:content_filter", "vllm:500", "deep", "bignum"], "retried"),
    **dict.fromkeys(["400", "501", "html:404", "echo", "error:400", "vllm:400"], "final"),
    **dict.fromkeys(["huge:6000000", "stream:100000000"], "final"),  # over the default 16 MB body cap
    **dict.fromkeys(["empty", "nochoices", "choices:str", "choice:str"], "final"),
    **dict.fromkeys(["usage:str", "length", "keyecho"], "kept"),
}
GENERATE_FAULTS = {
    **SHARED_FAULTS,
    **dict.fromkeys(["message:null", "nocontent", "content:int", "content:blank", "refusal"], "final"),
    # cut off at the budget before any answer: an empty answer, graded wrong and counted cut off
    **dict.fromkeys(["content:empty", "reasoning"], "cut"),
    "huge:600000": "final",  # under the body cap, over the 500,000 characters of text kept
}
LOGLIK_FAULTS = {
    **SHARED_FAULTS,
    **dict.fromkeys(
        ["logprobs:none", "logprob:nan", "logprob:pos", "logprob:str", "logprob:missing"], "final"
    ),
    # log-likelihood reads only the log-probabilities: the text's faults leave its answer intact
    **dict.fromkeys(["message:null", "huge:600000"], "kept"),
}


@dataclass
class Served:
    """One attempt as the server answered it."""

    fault: str | None
    loglik: bool

    @property
    def outcome(self) -> str:
        if self.fault is None:
            return "kept"
        return (LOGLIK_FAULTS if self.loglik else GENERATE_FAULTS)[self.fault]


@dataclass
class FaultServer(FakeOpenAI):
    rate: float = 0.3
    seed: int = 0
    # observations: question key -> the attempts served, in order (cleared between runs by the test)
    served: dict[str, list[Served]] = field(default_factory=dict)
    faults_served: Counter[str] = field(default_factory=Counter)
    faults_by_request: dict[bool, Counter[str]] = field(
        default_factory=lambda: {True: Counter(), False: Counter()}
    )
    _turn: Counter[bool] = field(default_factory=Counter)  # the next fault of each kind list, in turn

    def unserved(self, loglik: bool) -> set[str]:
        """The kinds of fault not yet served to requests of this kind."""
        return set(LOGLIK_FAULTS if loglik else GENERATE_FAULTS) - set(self.faults_by_request[loglik])

    def next_fault(self, prompt: str, body: dict[str, Any]) -> str | None:
        key = next((k for k in self.answers if k in prompt), None)
        if key is None:
            raise AssertionError(f"a prompt with no meant answer: {prompt[:80]!r}")
        attempt = self.attempts[key]
        self.attempts[key] += 1
        loglik = body.get("logprobs") not in (None, False)
        draw = hashlib.sha256(f"{self.seed}:{key}:{attempt}".encode()).digest()
        fault = None
        if int.from_bytes(draw[:8], "big") / 2**64 < self.rate:
            kinds = sorted(LOGLIK_FAULTS if loglik else GENERATE_FAULTS)
            fault = kinds[self._turn[loglik] % len(kinds)]
            self._turn[loglik] += 1
            self.faults_served[fault] += 1
            self.faults_by_request[loglik][fault] += 1
        self.served.setdefault(key, []).append(Served(fault, loglik))
        return fault

    def logprobs_for(self, prompt: str) -> dict[str, float]:
        """The meant answer's token first: a letter (single choice) or 正确 / 错误 (judgement)."""
        meant = next(v for k, v in self.answers.items() if k in prompt).removeprefix("答案：")
        tokens = ["A", "B", "C", "D"] if meant in "ABCD" else ["正确", "错误"]
        return {t: -0.05 if t == meant else -3.0 - i for i, t in enumerate(tokens)}
