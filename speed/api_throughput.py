"""Throughput of the OpenAI-compatible backend against a local server with a fixed 50 ms latency.

Prints requests per second at concurrency 1, 8 and 32 and the ratio to the ideal concurrency / latency.
Run: .venv/bin/python speed/api_throughput.py
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from kaoshi.models import GenerateRequest, ModelOptions, resolve_model

ROOT = Path(__file__).resolve().parent.parent

LATENCY_S = 0.050


@contextlib.contextmanager
def server_process(command: list[str] | None = None) -> Iterator[str]:
    """A fake server (by default tests/support/fake_openai.py with a fixed latency) in its own process,
    so it does not share the client's interpreter lock; the base URL it prints first."""
    command = command or [sys.executable, "-m", "tests.support.fake_openai", str(LATENCY_S)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(10)


def measure(base_url: str, concurrency: int, n_requests: int) -> tuple[float, float]:
    model = resolve_model("openai:bench", ModelOptions(base_url=base_url, concurrency=concurrency))
    requests = [
        GenerateRequest(f"q{i}", f"question {i}", messages=(("user", f"question {i}"),))
        for i in range(n_requests)
    ]
    list(model.generate(requests[: concurrency * 2]))  # warm up
    started = time.perf_counter()
    outputs = list(model.generate(requests))
    elapsed = time.perf_counter() - started
    assert len(outputs) == n_requests and all(o.error is None for o in outputs)
    rate = n_requests / elapsed
    return rate, rate / (concurrency / LATENCY_S)


def main() -> None:
    print(f"fixed server latency {LATENCY_S * 1000:.0f} ms; ideal rate = concurrency / latency")
    print(f"{'concurrency':>11} {'requests':>8} {'req/s':>8} {'ideal':>7} {'ratio':>6}")
    with server_process() as base_url:
        results = [(c, n, *measure(base_url, c, n)) for c, n in ((1, 60), (8, 400), (32, 1600))]
    for concurrency, n, rate, ratio in results:
        print(f"{concurrency:>11} {n:>8} {rate:>8.1f} {concurrency / LATENCY_S:>7.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    main()
