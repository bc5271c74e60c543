"""kaoshi.evaluate against the openai backend alone, log-likelihood on the fake server of http_peers.py.

    PYTHONPATH=src .venv/bin/python speed/evaluate_vs_backend.py [REPEATS]

1,600 questions, concurrency 32, 32 prompts a request, the fake at 50 ms a request in its own process;
the two alternate, each repeat, and each reports its rate and the client's CPU seconds (both threads):
on a 2-core machine the client is bound by its interpreter lock, so what evaluate adds to the backend's
time is about the CPU its main thread spends (prompts, scoring, store, summary).
"""

from __future__ import annotations

import os
import sys

import http_peers as hp


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    hp.WORK.mkdir(exist_ok=True)
    hp.export_tokenizer()
    questions = hp.load_questions(hp.WORK / "http-peers-ceval", 320, list(hp.GENERATORS))
    n = len(questions.plain)
    rates: dict[str, list[tuple[float, float]]] = {"backend": [], "evaluate": []}
    with hp.fake_server() as url:
        # fill the fake's table of replies, then one untimed pass of each
        hp.raw_seconds(url, "/completions", hp.kaoshi_bodies(questions, "loglik", 0, prompts_per_request=4))
        hp.kaoshi_loglik(questions, url, hp.CONCURRENCY, hp.CONCURRENCY * 2)
        hp.kaoshi_evaluate(questions, url, "loglik")
        for repeat in range(repeats):
            for what in rates:
                before = cpu_seconds()
                if what == "backend":
                    seconds = hp.kaoshi_loglik(questions, url, hp.CONCURRENCY, hp.CONCURRENCY * 2)[0]
                else:
                    seconds = hp.kaoshi_evaluate(questions, url, "loglik")[0]
                rates[what].append((n / seconds, cpu_seconds() - before))
            backend, evaluate = rates["backend"][-1][0], rates["evaluate"][-1][0]
            print(f"{repeat}: backend {backend:.0f} q/s, evaluate {evaluate:.0f} q/s", flush=True)
    for what, runs in rates.items():
        ordered = sorted(rate for rate, _ in runs)
        cpu = ", ".join(f"{c:.2f}" for _, c in runs)
        print(f"{what}: median {ordered[len(ordered) // 2]:.0f} q/s; client CPU s {cpu}")
    ratios = sorted(b[0] / e[0] for b, e in zip(rates["backend"], rates["evaluate"], strict=True))
    print(f"evaluate's time / the backend's: median {ratios[len(ratios) // 2]:.2f}")


if __name__ == "__main__":
    main()
