"""kaoshi's own overhead: 17,000 questions (QualBench's size) through the scripted mock backend with the
store on, through kaoshi.evaluate — prompting, extraction, scoring, every answer committed before it is
counted (the answers a batch returns in one transaction), and the run's summary counted by SQLite.

Prints questions per second and peak memory. Run: .venv/bin/python speed/mock_overhead.py
(KAOSHI_BENCH_N=100000 for a larger exam; KAOSHI_BENCH_MODEL=random for the random baseline, as
`kaoshi run --model random` asks: no script to read, and chunks of 64 where the mock's are of 8.)
"""

from __future__ import annotations

import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import kaoshi
from kaoshi.benchmarks import load_exam_result

N_QUESTIONS = int(__import__("os").environ.get("KAOSHI_BENCH_N", "17000"))
MODEL = __import__("os").environ.get("KAOSHI_BENCH_MODEL", "mock")
DOMAINS = ("安全生产", "消防安全", "建筑工程", "经济金融", "石油天然气", "银行保险")


def write_exam_and_script(folder: Path) -> tuple[Path, Path]:
    """A QualBench-layout JSON array and a mock script answering every question, in varied styles."""
    rng = random.Random(0)
    rows, script = [], []
    styles = (
        "答案：{a}\n解析：根据相关规定。",
        "{a}",
        "经过分析，正确答案是{a}。",
        "<think>先想一想</think>答案：{a}",
    )
    for i in range(N_QUESTIONS):
        kind = ("单选题", "多选题", "判断题")[i % 3]
        if kind == "判断题":
            question, answer = f"第{i}题：施工现场应当设置安全警示标志。", rng.choice(["正确", "错误"])
        else:
            options = "\n".join(f"{letter}．选项{letter}{i}" for letter in "ABCD")
            question = f"第{i}题：下列关于安全生产管理的说法，正确的是（）。\n{options}"
            answer = rng.choice("ABCD") if kind == "单选题" else "".join(sorted(rng.sample("ABCD", 2)))
        rows.append(
            {
                "idx": i,
                "question_type": kind,
                "domain": DOMAINS[i % 6],
                "question": question,
                "answer": answer,
                "explanation": "略",
            }
        )
        script.append({"id": str(i), "response": rng.choice(styles).format(a=answer)})
    exam_path, script_path = folder / "QualBench.json", folder / "mock.jsonl"
    exam_path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    script_path.write_text("\n".join(json.dumps(s, ensure_ascii=False) for s in script), encoding="utf-8")
    return exam_path, script_path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        exam_path, script_path = write_exam_and_script(folder)
        started = time.perf_counter()
        exam = load_exam_result("qualbench", exam_path).exam
        loaded = time.perf_counter()
        # Through kaoshi.evaluate, as `kaoshi run` goes: the run's spec is made by prepare_run (which pins
        # the QualBench demo for the whole run once), the model loaded from its spec.
        run_started = time.perf_counter()
        result = kaoshi.evaluate(
            exam,
            model=f"mock:{script_path}" if MODEL == "mock" else MODEL,
            store=folder / "store.sqlite",
            run_name="overhead",
            shots=1,
            max_new_tokens=64,
        )
        elapsed = time.perf_counter() - run_started
        # from the summary evaluate returns: its samples are read from the store only when asked for
        correct = result.summary.overall.correct
        outcome = result
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert outcome.new_samples == N_QUESTIONS and outcome.errors == 0
    print(f"{N_QUESTIONS} questions (QualBench layout, 1-shot qualbench prompt, {MODEL} backend, SQLite)")
    print(f"  load + parse:       {loaded - started:6.2f} s")
    rate = N_QUESTIONS / elapsed
    print(f"  run (prompt, ask, extract, score, commit, summary): {elapsed:6.2f} s = {rate:,.0f} questions/s")
    print(f"  correct (the script always answers right; random: by chance): {correct}/{N_QUESTIONS}")
    print(f"  peak memory (max RSS): {peak:,.0f} MiB")
    sys.exit(0 if correct == N_QUESTIONS or MODEL != "mock" else 1)


if __name__ == "__main__":
    main()
