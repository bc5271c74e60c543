"""Several OpenAI-compatible servers behind one backend (e.g. a vLLM server per GPU): each request goes to
the live endpoint with the fewest requests in flight; one that keeps failing is benched for a while and
then tried again, so a run completes while any endpoint lives."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kaoshi.errors import InputError

FAILURES_TO_BENCH = 3  # consecutive failures that bench an endpoint
BENCH_S = 5.0  # first bench; doubled each time it is benched again, up to MAX_BENCH_S
MAX_BENCH_S = 120.0


@dataclass
class Endpoint:
    url: str
    in_flight: int = 0
    failures: int = 0  # consecutive
    benched_until: float = 0.0
    times_benched: int = 0
    requests: int = 0


class EndpointPool:
    """Chooses an endpoint per attempt; told of each attempt's outcome."""

    def __init__(self, urls: Sequence[str], clock: Callable[[], float] = time.monotonic) -> None:
        if not urls:
            raise InputError("an endpoint pool needs at least one URL")
        self.endpoints = [Endpoint(url) for url in dict.fromkeys(urls)]
        self._clock = clock

    def acquire(self) -> Endpoint:
        """The live endpoint with the fewest requests in flight (the earliest to come back when every one
        is benched: the retry's backoff has waited already)."""
        now = self._clock()
        live = [e for e in self.endpoints if e.benched_until <= now]
        chosen = min(
            live or self.endpoints, key=lambda e: (e.in_flight, e.requests) if live else e.benched_until
        )
        chosen.in_flight += 1
        chosen.requests += 1
        return chosen

    def release(self, endpoint: Endpoint, ok: bool) -> None:
        endpoint.in_flight -= 1
        if ok:
            endpoint.failures = 0
            endpoint.times_benched = 0
            return
        endpoint.failures += 1
        if endpoint.failures >= FAILURES_TO_BENCH:
            pause = min(MAX_BENCH_S, BENCH_S * 2**endpoint.times_benched)
            endpoint.benched_until = self._clock() + pause
            endpoint.times_benched += 1
            endpoint.failures = 0
