"""What a full C-Eval val run costs a paid chat model (issue 43): 1,346 questions, 5-shot, through the
OpenAI-compatible backend against the fake server with a provider's prompt cache, priced at
gpt-4o-mini's public list price (USD per million tokens: prompt 0.15, cached prompt 0.075, completion
0.60; OpenAI's pricing page, late 2026).

The questions are our own, generated in the C-Eval CSV layout (ceval_data.py) for all 52 subjects, 26 val
questions each but two of 23 (1,346 in all) and 5 dev exemplars each. The fake counts a token a character
over the whole conversation, as a provider counts over every message, and caches prompt prefixes as
OpenAI documents: prefixes of 1,024 tokens and up, in steps of 128. Its answers are short ("答案：A").

What is measured, in one process, for each of two providers' cache rules and prices, one after the other:
- real time, in the exam's order: the tokens the server reported, at the list price without and with the
  cached prompt tokens' discount (the ledger prices what the provider says it cached);
- the same run through the fake's Batch API (`kaoshi.evaluate(batch=...)`, kaoshi's cache off, a fresh
  server whose prompt cache is empty): the tokens it reported at the batch share of the price (half),
  cached prompt tokens at their discount on top where the provider's rule gives one (the fake caches
  within a batch as in real time; whether a provider does is its own rule: Alibaba Model Studio gives no
  cache discount in batch, and DeepSeek has no batch endpoint); its answers are checked equal to the
  real-time run's;
- the same run again under another name: kaoshi's cache answers it from the store, with no request.

Run: `.venv/bin/python speed/cost_ceval.py` (about a minute).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support
sys.path.insert(0, str(Path(__file__).resolve().parent))  # ceval_data

from ceval_data import GENERATORS, write_ceval
from tests.support.fake_openai import FakeOpenAI

import kaoshi
from kaoshi.api.costs import Price, run_usage
from kaoshi.api.evaluation import BatchPolicy, CachePolicy
from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.ceval.subjects import CEVAL_SUBJECTS
from kaoshi.store import Store

# Two providers' caches and prices (USD per million tokens, as published in 2025: check the provider's
# pricing page before relying on them): OpenAI caches prompts of 1,024 tokens and up in steps of 128 and
# charges cached prompt tokens half; DeepSeek caches in units of 64 tokens and charges a hit about a
# quarter. The fake applies each provider's rule to its own token counts (a character a token).
PROVIDERS = {
    "openai:gpt-4o-mini": (Price(0.15, 0.60, 0.075), dict(prefix_cache=128, cache_min=1024)),
    "openai:deepseek-chat": (
        Price(0.27, 1.10, 0.07),
        dict(prefix_cache=64, cache_min=64, cache_style="deepseek"),
    ),
}


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake")  # the fake asks for none; the backend wants one
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        exam = ceval_shaped(work)
        print(
            f"C-Eval-shaped val: {len(exam)} questions, 52 subjects, 5-shot, the fake at 16 requests at once"
        )
        print("| model (cache rule) | prompt tokens | cached | completion | real time, no cache | with the "
              "provider's cache | batch | the run again |")  # fmt: skip
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for model, (price, cache_rule) in PROVIDERS.items():
            row = measure(work / model.replace(":", "_"), exam, model, price, cache_rule)
            print(row)


def ceval_shaped(work: Path) -> Any:
    """Our own questions in the C-Eval layout for the 52 subjects: 26 val questions each but two of 23
    (1,346 in all), 5 solved dev exemplars each."""
    kinds = list(GENERATORS.values())
    subjects = sorted(CEVAL_SUBJECTS)
    sizes = {name: (23 if i >= len(subjects) - 2 else 26) for i, name in enumerate(subjects)}
    for i, name in enumerate(subjects):
        GENERATORS.setdefault(name, kinds[i % len(kinds)])
    exam = load_exam_result("ceval", data=str(write_ceval(work / "ceval", sizes)), split="val").exam
    assert len(exam) == 1346, len(exam)
    return exam


def measure(work: Path, exam: Any, model: str, price: Price, cache_rule: dict[str, Any]) -> str:
    """One model's run in real time, then the same run again (kaoshi's cache), priced."""
    store = work / "s.sqlite"
    work.mkdir(parents=True)
    with FakeOpenAI(whole_conversation=True, **cache_rule) as server:
        # a server on this machine: the cache is asked for, as a provider's endpoint has it by default
        options: dict[str, Any] = dict(
            base_url=server.base_url, store=store, shots=5, concurrency=16, cache=CachePolicy(True)
        )
        kaoshi.evaluate(exam, model, run_name="realtime", **options)
        sent = len(server.bodies)
        again = kaoshi.evaluate(exam, model, run_name="again", **options)
        resent = len(server.bodies) - sent
    # the batch run against a fresh server: its prompt cache holds nothing the real-time run put there
    with FakeOpenAI(whole_conversation=True, **cache_rule) as server:
        options["base_url"] = server.base_url
        batch_options = {**options, "cache": CachePolicy(False), "batch": BatchPolicy(poll_s=0)}
        kaoshi.evaluate(exam, model, run_name="batch", **batch_options)
        assert not server.bodies, "a batch run sent a real-time request"
    usage, repeat = run_usage("realtime", store=store), run_usage("again", store=store)
    batched = run_usage("batch", store=store)
    with Store(store, read_only=True) as opened:
        answers = {s.question_id: (s.response, s.correct) for s in opened.iter_samples("realtime")}
        assert answers == {s.question_id: (s.response, s.correct) for s in opened.iter_samples("batch")}
    listed = price.cost(usage.prompt, usage.completion)
    cached = usage.cost(price)
    in_batch = batched.cost(price)
    rule = f"{cache_rule['prefix_cache']}-token steps from {cache_rule['cache_min']:,}"
    return (
        f"| {model} ({rule}) | {usage.prompt:,} | {usage.cached:,} ({usage.cached / usage.prompt:.0%}) | "
        f"{usage.completion:,} | {listed:.4f} (100%) | {cached:.4f} ({cached / listed:.0%}) | "
        f"{in_batch:.4f} ({in_batch / listed:.0%}; {batched.cached / batched.prompt:.0%} cached) | "
        f"{repeat.cost(price):.4f}: {resent} requests, {again.cached} "
        "answers from the cache |"
    )


if __name__ == "__main__":
    main()
