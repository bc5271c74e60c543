"""Several OpenAI-compatible endpoints behind one backend: load spread by requests in flight, a failing
endpoint benched, a run that completes while any endpoint lives, the set of endpoints in the run spec."""

from __future__ import annotations

from pathlib import Path

import pytest

import kaoshi
from kaoshi.models import GenerateRequest, ModelOptions, resolve_model
from kaoshi.models.endpoints import BENCH_S, FAILURES_TO_BENCH, EndpointPool
from kaoshi.models.retry import Backoff
from tests.support.fake_openai import FakeOpenAI

pytest.importorskip("aiohttp")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_pool_prefers_the_least_busy_and_benches_a_failing_endpoint() -> None:
    clock = Clock()
    pool = EndpointPool(["http://a", "http://b", "http://a"], clock)  # a repeated URL counts once
    assert [e.url for e in pool.endpoints] == ["http://a", "http://b"]
    first, second = pool.acquire(), pool.acquire()
    assert {first.url, second.url} == {"http://a", "http://b"}
    pool.release(first, ok=True)
    pool.release(second, ok=True)
    a, b = pool.endpoints
    for _ in range(FAILURES_TO_BENCH):
        chosen = pool.acquire()
        chosen_b = chosen if chosen is b else pool.acquire()
        if chosen is not b:
            pool.release(chosen, ok=True)
        pool.release(chosen_b, ok=False)
    assert b.benched_until == clock.now + BENCH_S
    assert all(pool.acquire() is a for _ in range(5))  # b is benched
    clock.now += BENCH_S
    for _ in range(5):
        pool.release(a, ok=True)
    assert pool.acquire() is b  # back after its bench, and the least busy
    for _ in range(FAILURES_TO_BENCH):
        pool.release(b, ok=False)
        b.in_flight += 1
    assert b.benched_until == clock.now + 2 * BENCH_S  # benched again: twice as long
    a.benched_until = clock.now + 50
    assert pool.acquire() is b  # every endpoint benched: the one back first


def ask(model: object, n: int) -> list[str | None]:
    requests = [GenerateRequest(f"q{i}", f"题{i}", max_new_tokens=4) for i in range(n)]
    return [o.error for o in model.generate(requests)]  # type: ignore[attr-defined]


def test_requests_spread_over_endpoints_and_a_failing_one_is_benched() -> None:
    with FakeOpenAI(latency_s=0.02) as one, FakeOpenAI(latency_s=0.02) as two:
        model = resolve_model("openai:m", ModelOptions(base_url=(one.base_url, two.base_url), concurrency=8))
        assert ask(model, 40) == [None] * 40
        assert 10 <= len(one.bodies) <= 30 and len(one.bodies) + len(two.bodies) == 40
    with FakeOpenAI() as good, FakeOpenAI(faults={"题": ["500"] * 1000}) as bad:
        model = resolve_model("openai:m", ModelOptions(base_url=(bad.base_url, good.base_url), concurrency=4))
        model.backoff = Backoff(base_s=0.01, cap_s=0.02)  # type: ignore[attr-defined]
        assert ask(model, 40) == [None] * 40
        assert len(good.bodies) == 40
        assert len(bad.bodies) <= FAILURES_TO_BENCH + 4  # benched once it had failed, not asked 40 times


def test_a_run_completes_when_an_endpoint_dies_mid_run(tmp_path: Path) -> None:
    with FakeOpenAI(latency_s=0.03) as survivor, FakeOpenAI(latency_s=0.03, die_after=6) as dying:
        result = kaoshi.evaluate(
            "sample",
            model="openai:m",
            base_url=[dying.base_url, survivor.base_url],
            concurrency=4,
            store=tmp_path / "s.sqlite",
        )
    assert result.errors == 0 and len(result.samples) == 44
    assert len(dying.bodies) == 6 and len(survivor.bodies) >= 44 - 6
    # The set of endpoints is recorded, in an order that does not depend on how they were given.
    assert result.spec.model_settings["base_url"] == sorted([dying.base_url, survivor.base_url])
