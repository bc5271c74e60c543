"""Greedy generation on the hf backend: prefix reuse against transformers' batched `generate` and against
lm-evaluation-harness's `generate_until`.

Two protocols, our own generated questions, SmolLM2-135M (fp32, CPU), the same greedy settings and budget
for every path: (a) the QualBench prompt (`qualbench`, one fixed demo per type, 50 new tokens); (b) C-Eval
5-shot chain of thought (`ceval-cot`; 64 new tokens here, since its 1,024 would take an hour on 2 cores).
Peers: kaoshi's plain path, `model.generate` in length-sorted batches of 8; and lm-evaluation-harness
0.4.13 (`--model hf`, installed into speed/.venv-lmeval when missing) running `generate_until` on the
exact text kaoshi's model reads (the chat-template-rendered prompt, fed through a local JSONL task), on
kaoshi's converted copy of the same GGUF weights, in its own process per batch size
(`generate_lmeval_worker.py`). Model loading is outside the clock for all.

    .venv/bin/python speed/generate_speed.py [--lmeval-batch-sizes 1,8]
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
from loglik_vs_lmeval import ensure_lmeval  # noqa: E402

from kaoshi.benchmarks import get_template, load_exam_result  # noqa: E402
from kaoshi.data.model import Exam, Question, QuestionType  # noqa: E402
from kaoshi.models import GenerateRequest, ModelOptions, gguf_cache, resolve_model  # noqa: E402
from kaoshi.models.hf import HFModel, smollm2_path  # noqa: E402
from kaoshi.prompts.base import RenderOptions  # noqa: E402
from kaoshi.prompts.registry import exemplars_for_run  # noqa: E402

WORK = HERE / "work"


def qualbench_like(exam: Exam) -> Exam:
    """The generated C-Eval questions as one QualBench-style exam (single choice, plus true/false
    statements made from them), so the QualBench prompt has a demo per type."""
    questions = list(exam.questions)
    for q in exam.questions[::2]:
        letter = sorted(q.answer)[0]  # type: ignore[arg-type]
        statement = f"{q.stem.rstrip('_')}答案是{dict(q.options)[letter]}。"
        questions.append(
            Question(id=f"{q.id}-judge", type=QuestionType.TRUE_FALSE, stem=statement, answer=True)
        )
    return Exam(name="qualbench-like", questions=tuple(questions), metadata={"benchmark": "qualbench"})


def requests_for(
    exam: Exam, template_name: str, shots: int, budget: int, chat: bool
) -> list[GenerateRequest]:
    template = get_template(template_name)
    pinned, _ = exemplars_for_run(template, exam, ())
    options = RenderOptions(shots=shots, chat=chat, exemplar_ids=pinned)
    requests = []
    for question in exam.questions:
        prompt = template.render(question, exam, options)
        requests.append(
            GenerateRequest(question.id, prompt.text, messages=prompt.messages, max_new_tokens=budget)
        )
    return requests


def timed(model: HFModel, requests: list[GenerateRequest], reuse: bool) -> tuple[float, dict[str, str], int]:
    model.reuse_prefix = reuse
    started = time.perf_counter()
    outputs = list(model.generate(requests))
    elapsed = time.perf_counter() - started
    return elapsed, {o.id: o.text or "" for o in outputs}, sum(o.tokens_out for o in outputs)


def write_prompts(model: HFModel, requests: list[GenerateRequest], path: Path) -> Path:
    """The exact text kaoshi's model reads for each request, and kaoshi's token ids for it, one a line."""
    lines = []
    for r in requests:
        text = model.render(r.prompt, r.messages)
        ids = model.encode(text, chat=r.messages is not None)
        lines.append(json.dumps({"id": r.id, "prompt": text, "ids": ids}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_lmeval(python: Path, folder: Path, prompts: Path, budget: int, batch: str) -> dict[str, Any]:
    out = WORK / f"{prompts.stem}-lmeval-{batch}.json"
    command = [str(python), str(HERE / "generate_lmeval_worker.py"), str(folder), str(prompts), str(out)]
    command += ["--batch-size", batch, "--max-gen-toks", str(budget)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"lm-eval (batch {batch}) failed:\n{result.stderr[-3000:]}")
    record: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return record


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lmeval-batch-sizes", default="1,8", help="comma-separated; 'auto' is accepted")
    args = parser.parse_args()
    lmeval_python = ensure_lmeval()
    WORK.mkdir(exist_ok=True)
    data = write_ceval(WORK / "ceval-generate", {"high_school_mathematics": 12, "accountant": 12}, seed=3)
    ceval = load_exam_result("ceval", str(data), split="val").exam
    model = resolve_model("smollm2", ModelOptions())
    assert isinstance(model, HFModel)
    # lm-eval loads the same weights: kaoshi's converted copy of the GGUF file, written by the load above.
    folder = gguf_cache.cached(smollm2_path(), model.model.dtype)
    assert folder is not None, "no converted GGUF copy (KAOSHI_GGUF_CACHE=off?)"
    sets = [
        ("QualBench protocol (qualbench, 1 demo, 50 tokens)", qualbench_like(ceval), "qualbench", 1, 50),
        ("C-Eval 5-shot CoT (ceval-cot, 64 tokens)", ceval, "ceval-cot", 5, 64),
    ]
    rows = []
    for title, exam, template, shots, budget in sets:
        requests = requests_for(exam, template, shots, budget, chat=model.default_chat)
        prompts = write_prompts(model, requests, WORK / f"generate-{template}.jsonl")
        fast, fast_text, fast_tokens = timed(model, requests, reuse=True)
        plain, plain_text, plain_tokens = timed(model, requests, reuse=False)
        same = sum(fast_text[k] == plain_text[k] for k in plain_text)
        lmeval = {
            batch: run_lmeval(lmeval_python, folder, prompts, budget, batch)
            for batch in args.lmeval_batch_sizes.split(",")
        }
        for batch, record in lmeval.items():
            print(
                f"  lm-eval batch {batch}: {record['seconds']:.1f} s in generate_until "
                f"({record['total_seconds']:.1f} s simple_evaluate), {record['peak_rss_mib']:.0f} MiB, "
                f"same prompt text {record['same_context']}/{record['questions']}, "
                f"same token ids {record['same_ids']}/{record['questions']}",
                flush=True,
            )
        best = min(lmeval, key=lambda batch: lmeval[batch]["seconds"])
        theirs = lmeval[best]["outputs"]
        assert set(theirs) == set(fast_text), "lm-eval answered different questions"
        same_lmeval = {
            batch: sum(r["outputs"][k] == fast_text[k] for k in fast_text) for batch, r in lmeval.items()
        }
        # kaoshi drops a character the budget cut in half (U+FFFD); lm-eval keeps it
        same_whole = sum(theirs[k].rstrip("\ufffd") == fast_text[k] for k in fast_text)
        context = sum(
            len(model.encode(model.render(r.prompt, r.messages), chat=r.messages is not None))
            for r in requests
        )
        rows.append(
            {
                "set": title,
                "questions": len(requests),
                "avg_prompt_tokens": round(context / len(requests)),
                "kaoshi_s": round(fast, 1),
                "plain_generate_s": round(plain, 1),
                "lmeval_s": {batch: round(r["seconds"], 1) for batch, r in lmeval.items()},
                "lmeval_best": best,
                "kaoshi_s_per_q": round(fast / len(requests), 2),
                "ratio": round(plain / fast, 2),
                "lmeval_ratio": round(lmeval[best]["seconds"] / fast, 2),
                "identical": f"{same}/{len(requests)}",
                "identical_lmeval": {batch: f"{n}/{len(requests)}" for batch, n in same_lmeval.items()},
                "identical_lmeval_whole_chars": f"{same_whole}/{len(requests)}",
                "tokens_out": [fast_tokens, plain_tokens],
            }
        )
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    print(
        "| set | questions | prompt tokens | kaoshi | transformers generate (batch 8) | ratio | "
        "lm-eval generate_until (best) | ratio | identical (plain / lm-eval) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        best = r["lmeval_best"]
        print(
            f"| {r['set']} | {r['questions']} | {r['avg_prompt_tokens']} | {r['kaoshi_s']} s | "
            f"{r['plain_generate_s']} s | **{r['ratio']}x** | {r['lmeval_s'][best]} s (batch {best}) | "
            f"**{r['lmeval_ratio']}x** | {r['identical']} / {r['identical_lmeval'][best]} "
            f"({r['identical_lmeval_whole_chars']} less a cut character) |"
        )


if __name__ == "__main__":
    main()
