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
- the same run again under another name: kaoshi's cache answers it from the store, with no request;
- a batch endpoint's price (half the list price at OpenAI) is a projection: kaoshi has no batch mode yet.

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
from kaoshi.api.evaluation import CachePolicy
from kaoshi.benchmarks import load_exam_result
from kaoshi.benchmarks.ceval.subjects import CEVAL_SUBJECTS

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
BATCH_SHARE = 0.5  # a batch endpoint (OpenAI's, Alibaba Model Studio's): half the list price


def main() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-fake")  # the fake asks for none; the backend wants one
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        exam = ceval_shaped(work)
        print(
            f"C-Eval-shaped val: {len(exam)} questions, 52 subjects, 5-shot, the fake at 16 requests at once"
        )
        print("| model (cache rule) | prompt tokens | cached | completion | real time, no cache | with the "
              "provider's cache | batch (projected) | the run again |")  # fmt: skip
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
    usage, repeat = run_usage("realtime", store=store), run_usage("again", store=store)
    listed = price.cost(usage.prompt, usage.completion)
    cached = usage.cost(price)
    rule = f"{cache_rule['prefix_cache']}-token steps from {cache_rule['cache_min']:,}"
    return (
        f"| {model} ({rule}) | {usage.prompt:,} | {usage.cached:,} ({usage.cached / usage.prompt:.0%}) | "
        f"{usage.completion:,} | {listed:.4f} (100%) | {cached:.4f} ({cached / listed:.0%}) | "
        f"{listed * BATCH_SHARE:.4f} (50%) | {repeat.cost(price):.4f}: {resent} requests, {again.cached} "
        "answers from the cache |"
    )


if __name__ == "__main__":
    main()
