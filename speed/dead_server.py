"""A server that fails every request: how long a run of 16 questions takes to end with default options
(issue 40: 292 s against a server answering 500, when probing lists serialised every retry).

The fake OpenAI server (tests/support/fake_openai.py) answers every request with the fault named, or a
closed port refuses every connection; kaoshi.evaluate runs the sample exam's first 16 questions by
log-likelihood (plain prompts, echo) with `kaoshi run`'s defaults. Prints each fault's wall time, the
requests the server saw and the one line `kaoshi run` would end with.

    .venv/bin/python speed/dead_server.py                # 500, drop, refused: about 30 s each
    .venv/bin/python speed/dead_server.py --hang 5       # also a server that never answers, --timeout 5
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_openai import FakeOpenAI

import kaoshi

QUESTIONS = 16


def run(base_url: str, **options: object) -> tuple[float, str]:
    exam = kaoshi.load_exam("sample").limited(QUESTIONS)
    started = time.perf_counter()
    store = Path(tempfile.mkdtemp()) / "runs.sqlite"
    result = kaoshi.evaluate(
        exam, model="openai:m", method="loglik", chat=False, base_url=base_url, store=store, **options
    )
    took = time.perf_counter() - started
    cause, count = result.error_causes()[0] if result.error_causes() else ("no errors", 0)
    return took, f"{cause} ({count} of {len(result.samples)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hang", type=float, metavar="TIMEOUT", help="also a hanging server, this --timeout")
    arguments = parser.parse_args()
    faults: list[tuple[str, dict[str, object]]] = [("500", {}), ("drop", {})]
    if arguments.hang:
        faults.append(("hang", {"timeout_s": arguments.hang}))
    for fault, options in faults:
        with FakeOpenAI(faults={"": [fault] * 100_000}, hang_s=3_600) as server:
            took, said = run(server.base_url, **options)
            requests = len(server.bodies)
        print(f"{fault:8} {took:6.1f} s  {requests:4} requests  {said}", flush=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    took, said = run(f"http://127.0.0.1:{port}/v1")
    print(f"{'refused':8} {took:6.1f} s     - requests  {said}", flush=True)


if __name__ == "__main__":
    main()
