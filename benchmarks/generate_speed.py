"""Greedy generation on the hf backend: prefix reuse against transformers' batched `generate`.

Two protocols, our own generated questions, SmolLM2-135M (fp32, CPU), the same greedy settings and budget
for both paths: (a) the QualBench prompt (`qualbench`, one fixed demo per type, 50 new tokens); (b) C-Eval
5-shot chain of thought (`ceval-cot`; 64 new tokens here, since its 1,024 would take an hour on 2 cores).
The peer is kaoshi's plain path, `model.generate` in length-sorted batches of 8 (the way
lm-evaluation-harness's `generate_until` calls it). Model loading is outside the clock.

    .venv/bin/python benchmarks/generate_speed.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ceval_data import write_ceval  # noqa: E402

from kaoshi import load_exam  # noqa: E402
from kaoshi.data.model import Exam, Question, QuestionType  # noqa: E402
from kaoshi.models import GenerateRequest, ModelOptions, resolve_model  # noqa: E402
from kaoshi.models.hf import HFModel  # noqa: E402
from kaoshi.prompts import get_template  # noqa: E402
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
        questions.append(Question(id=f"{q.id}-judge", type=QuestionType.JUDGE, stem=statement, answer=True))
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


def main() -> None:
    data = write_ceval(WORK / "ceval-generate", {"high_school_mathematics": 12, "accountant": 12}, seed=3)
    ceval = load_exam("ceval", str(data), split="val").exam
    model = resolve_model("smollm2", ModelOptions())
    assert isinstance(model, HFModel)
    sets = [
        ("QualBench protocol (qualbench, 1 demo, 50 tokens)", qualbench_like(ceval), "qualbench", 1, 50),
        ("C-Eval 5-shot CoT (ceval-cot, 64 tokens)", ceval, "ceval-cot", 5, 64),
    ]
    rows = []
    for title, exam, template, shots, budget in sets:
        requests = requests_for(exam, template, shots, budget, chat=model.default_chat)
        fast, fast_text, fast_tokens = timed(model, requests, reuse=True)
        plain, plain_text, plain_tokens = timed(model, requests, reuse=False)
        same = sum(fast_text[k] == plain_text[k] for k in plain_text)
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
                "kaoshi_s_per_q": round(fast / len(requests), 2),
                "plain_s_per_q": round(plain / len(requests), 2),
                "ratio": round(plain / fast, 2),
                "identical": f"{same}/{len(requests)}",
                "tokens_out": [fast_tokens, plain_tokens],
            }
        )
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    print(
        "| set | questions | prompt tokens | kaoshi | transformers generate (batch 8) | ratio | identical |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['set']} | {r['questions']} | {r['avg_prompt_tokens']} | {r['kaoshi_s']} s | "
            f"{r['plain_generate_s']} s | **{r['ratio']}x** | {r['identical']} |"
        )


if __name__ == "__main__":
    main()
