"""Dawid-Skene over a QualBench-sized crowd: kaoshi's vectorised EM against crowd-kit's DawidSkene
(Toloka's crowdsourcing library, the usual choice in a one-off script), same answers, same machine.

Synthetic crowd: 17,000 four-option questions, 8 models (accuracies 0.45-0.80, one adversarial that
mostly answers the next letter, one that abstains a fifth of the time). Prints time, accuracy against
the truth, and how often the two implementations agree. crowd-kit is not a kaoshi dependency: install
it (`pip install crowd-kit`) to get the peer's figures. Run: .venv/bin/python speed/vote_speed.py
"""

from __future__ import annotations

import os
import random
import time

from kaoshi.analysis.voting import dawid_skene, plurality

N = int(os.environ.get("KAOSHI_BENCH_N", "17000"))
LETTERS = "ABCD"
SKILLS = (0.80, 0.72, 0.65, 0.60, 0.55, 0.45)


def crowd(n: int) -> tuple[list[str], list[list[str | None]]]:
    rng = random.Random(0)
    truth = [rng.choice(LETTERS) for _ in range(n)]

    def noisy(t: str, skill: float) -> str:
        return t if rng.random() < skill else rng.choice([x for x in LETTERS if x != t])

    ballots: list[list[str | None]] = []
    for t in truth:
        row: list[str | None] = [noisy(t, s) for s in SKILLS]
        row.append(LETTERS[(LETTERS.index(t) + 1) % 4] if rng.random() < 0.85 else rng.choice(LETTERS))
        row.append(None if rng.random() < 0.2 else noisy(t, 0.6))
        ballots.append(row)
    return truth, ballots


def accuracy(answers: list[str | None], truth: list[str]) -> float:
    return sum(a == t for a, t in zip(answers, truth, strict=True)) / len(truth)


def main() -> None:
    truth, ballots = crowd(N)
    print(f"{N} questions x {len(ballots[0])} models")
    start = time.perf_counter()
    majority = [plurality(b) for b in ballots]
    seconds = time.perf_counter() - start
    print(f"majority vote            {seconds:7.3f} s   accuracy {accuracy(majority, truth):.4f}")
    start = time.perf_counter()
    ours = dawid_skene(ballots)
    seconds = time.perf_counter() - start
    print(
        f"kaoshi dawid_skene       {seconds:7.3f} s   accuracy {accuracy(ours.answers, truth):.4f}"
        f"   ({ours.iterations} iterations)"
    )
    try:
        import pandas as pd
        from crowdkit.aggregation import DawidSkene
    except ImportError:
        print("crowd-kit is not installed: no peer figures")
        return
    frame = pd.DataFrame(
        [(q, w, a) for q, b in enumerate(ballots) for w, a in enumerate(b) if a is not None],
        columns=["task", "worker", "label"],
    )
    start = time.perf_counter()
    theirs = DawidSkene(n_iter=200, tol=1e-7).fit_predict(frame)
    peer = time.perf_counter() - start
    answers = [theirs.get(q) for q in range(N)]
    same = sum(a == b for a, b in zip(answers, ours.answers, strict=True)) / N
    print(f"crowd-kit DawidSkene     {peer:7.3f} s   accuracy {accuracy(answers, truth):.4f}")
    print(f"kaoshi is {peer / seconds:.1f}x faster; the two agree on {100 * same:.2f}% of questions")


if __name__ == "__main__":
    main()
