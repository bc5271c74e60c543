"""Throughput with 1 and 2 backend replicas on Ray (`kaoshi run --replicas N`), against one process.

Three measurements, each in this run on this machine:
- I/O bound: the scripted mock with 50 ms latency per answer (a remote model): replicas overlap waits;
- CPU bound: SmolLM2-135M on 2 cores (a local model): replicas share the cores;
- the driver's ceiling: an instant backend (random), so only kaoshi's own work and the store count.
Then a table extrapolating N GPU replicas from the measured figures: min(N x one replica, the ceiling).

Run: .venv/bin/python speed/scale_out.py  (needs `pip install 'kaoshi[ray]'`; KAOSHI_BENCH_QUICK=1
skips the real model)
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import ray

import kaoshi

LATENCY_S = 0.05
CEILING_QUESTIONS = 4000
MOCK_QUESTIONS = 200  # 10 s of answers for one replica: the replicas' start (about 1 s) is a small part


def timed(**kwargs: object) -> tuple[float, int]:
    """(seconds, questions) of one evaluate call into a fresh in-memory store."""
    started = time.perf_counter()
    result = kaoshi.evaluate(**kwargs)  # type: ignore[arg-type]
    assert result.errors == 0, result
    return time.perf_counter() - started, len(result.samples)


def mock_script(folder: Path, exam: kaoshi.Exam) -> Path:
    path = folder / "slow.jsonl"
    rows = [{"id": q.id, "response": "答案：A", "delay": LATENCY_S} for q in exam.questions]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def big_exam(folder: Path) -> Path:
    """CEILING_QUESTIONS single-choice questions in kaoshi JSONL."""
    path = folder / "big.jsonl"
    rows = [
        {"id": f"q{i}", "type": "single", "question": f"第{i}题：下列说法正确的是（）。",
         "options": {"A": "甲", "B": "乙", "C": "丙", "D": "丁"}, "answer": "ABCD"[i % 4],
         "domain": f"领域{i % 6}"}
        for i in range(CEILING_QUESTIONS)
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def rate(seconds: float, questions: int) -> float:
    return questions / seconds


def main() -> None:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    rows: list[tuple[str, str, float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sample = kaoshi.load_exam("sample")
        big = kaoshi.load_exam("kaoshi", big_exam(folder))
        slow = big.limited(MOCK_QUESTIONS)
        script = mock_script(folder, slow)
        for replicas in (None, 1, 2):
            label = "one process" if replicas is None else f"{replicas} replica(s)"
            extra = {} if replicas is None else {"replicas": replicas, "ray": True}
            seconds, n = timed(exam=slow, model=f"mock:{script}", **extra)
            rows.append(("mock, 50 ms per answer", label, seconds, n))
        if not os.environ.get("KAOSHI_BENCH_QUICK"):
            model = kaoshi.load_model("smollm2")  # warm the converted-GGUF cache and imports once
            model.close()
            for replicas in (None, 1, 2):
                label = "one process" if replicas is None else f"{replicas} replica(s)"
                extra = {} if replicas is None else {"replicas": replicas, "ray": True}
                seconds, n = timed(
                    exam=sample, model="smollm2", method="loglik", max_new_tokens_open=16, **extra
                )
                rows.append(("smollm2 loglik, 2 CPU cores", label, seconds, n))
        for replicas in (None, 2):
            label = "one process" if replicas is None else f"{replicas} replica(s)"
            extra = {} if replicas is None else {"replicas": replicas, "ray": True}
            seconds, n = timed(exam=big, model="random", store=folder / f"c{replicas}.sqlite", **extra)
            rows.append(("instant backend (driver ceiling)", label, seconds, n))
    print(f"{'workload':36} {'setup':14} {'seconds':>8} {'questions':>9} {'q/s':>8}")
    for workload, label, seconds, n in rows:
        print(f"{workload:36} {label:14} {seconds:8.2f} {n:9d} {rate(seconds, n):8.1f}")
    # Replicas hand their answers to the driver through Ray: its ceiling is the instant backend on Ray.
    ceiling = next(
        rate(s, n) for w, label, s, n in rows if w.startswith("instant") and label != "one process"
    )
    mock_one = next(rate(s, n) for w, label, s, n in rows if w.startswith("mock") and label == "1 replica(s)")
    print(
        f"\nextrapolated: one replica {mock_one:.1f} q/s (the 50 ms mock), driver ceiling {ceiling:.0f} q/s"
    )
    for n in (1, 2, 4, 8, 16, 64):
        print(f"  {n:3d} replicas: {min(n * mock_one, ceiling):8.1f} q/s")
    ray.shutdown()


if __name__ == "__main__":
    main()
