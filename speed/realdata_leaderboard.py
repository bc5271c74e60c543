"""The first N questions of every subject of a benchmark's published files, answered by the random baseline
and SmolLM2-135M (log-likelihood), then `kaoshi leaderboard` over them: the check a newcomer runs on real
data before a full run. Needs KAOSHI_REALDATA (tests/realdata/assemble.sh) and the smollm2 package.

    python speed/realdata_leaderboard.py --per-subject 3 --store kaoshi_runs/realdata.sqlite
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import kaoshi
from kaoshi.data.model import Exam

# benchmark -> (repository folder, split)
BENCHMARKS = {"cmmlu": ("CMMLU", "test"), "gaokao-bench": ("GAOKAO-Bench", None)}


def first_per_subject(exam: Exam, n: int) -> Exam:
    """The first n questions of each subject (GAOKAO-Bench: of each file), in the exam's order."""
    taken: dict[str, int] = defaultdict(int)
    kept = []
    for question in exam.questions:
        key = question.subject or (question.source.file if question.source else "")
        if taken[key] < n:
            taken[key] += 1
            kept.append(question)
    return replace(exam, questions=tuple(kept))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-subject", type=int, default=3)
    parser.add_argument("--store", default="kaoshi_runs/realdata.sqlite")
    parser.add_argument("--benchmark", action="append", choices=sorted(BENCHMARKS))
    args = parser.parse_args()
    root = os.environ.get("KAOSHI_REALDATA")
    if not root:
        sys.exit(
            "set KAOSHI_REALDATA to a folder of the benchmarks' repositories (tests/realdata/assemble.sh)"
        )
    Path(args.store).parent.mkdir(parents=True, exist_ok=True)
    smollm2 = kaoshi.load_model("smollm2")
    try:
        for name in args.benchmark or sorted(BENCHMARKS):
            folder, split = BENCHMARKS[name]
            loaded = kaoshi.load_exam(name, data=Path(root) / folder, split=split)
            exam = first_per_subject(loaded, args.per_subject)
            objective = replace(exam, questions=tuple(q for q in exam.questions if q.type.value != "open"))
            for label, model in (("random", "random"), ("smollm2", smollm2)):
                started = time.perf_counter()
                result = kaoshi.evaluate(
                    objective, model=model, method="loglik", run_name=f"{name}-{label}", store=args.store
                )
                print(
                    f"{name} {label}: {len(objective.questions)} questions "
                    f"({args.per_subject} per subject) in {time.perf_counter() - started:.0f} s; "
                    f"accuracy {result.accuracy}"
                )
    finally:
        smollm2.close()
    subprocess.run(
        [str(Path(sys.executable).with_name("kaoshi")), "leaderboard", "--store", args.store], check=True
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
