"""The peers of speed/http_peers.py, each run in its own venv and process.

    python http_peers_worker.py lmeval-loglik JOB.json OUT.json     (speed/.venv-lmeval)
    python http_peers_worker.py lmeval-generate JOB.json OUT.json   (speed/.venv-lmeval)
    python http_peers_worker.py evalscope JOB.json OUT.json         (speed/.venv-evalscope)

lm-evaluation-harness: its LM classes are called directly (`loglikelihood` / `generate_until` on
Instances), with exactly the (context, continuation) pairs and chat messages kaoshi builds, so both
tools send the same inputs and no task configuration comes between them. Building the LM object (its
tokenizer load) is outside the clock, as kaoshi's model load is; what lm-eval does inside the call
(tokenizing the pairs, batching, requests, parsing) is timed.

EvalScope: `run_task` in its OpenAI-API service mode on a local `general_mcq` dataset (our generated
C-Eval-layout CSVs, unchanged), its own prompt template; timed whole and its sample pool alone.

Only the standard library is imported at the top: the peers' packages are imported inside their own
functions, in their own venvs.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time
import urllib.request
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def server_counts(base_url: str) -> list[int] | None:
    """[requests, prompts] the fake server (speed/http_peers.py's) has been sent; None from another."""
    try:
        with urllib.request.urlopen(f"{base_url}/stats", timeout=10) as reply:
            counts = json.loads(reply.read())
    except OSError:
        return None
    return [counts["requests"], counts["prompts"]]


def counted(base_url: str, before: list[int] | None) -> list[int] | None:
    after = server_counts(base_url)
    return None if before is None or after is None else [a - b for a, b in zip(after, before, strict=True)]


def timed(job: dict[str, Any], call: Any, instances: list[Any]) -> tuple[Any, float, list[int] | None]:
    """An lm-eval LM call on `instances` after the job's warm-up ones untimed: its results, seconds and
    what the server counted."""
    call(instances[: job.get("warmup", 0)], disable_tqdm=True)
    before = server_counts(job["base_url"])
    started = time.perf_counter()
    results = call(instances, disable_tqdm=True)
    seconds = time.perf_counter() - started
    return results, seconds, counted(job["base_url"], before)


def lmeval_loglik(job: dict[str, Any]) -> dict[str, Any]:
    """Job: base_url, tokenizer, model, pairs [[question id, context, continuation]], warmup (pairs sent
    first, untimed), configs [{num_concurrent, batch_size, tokenized_requests}]; each config's time,
    the requests and prompts the server counted, and the log-probs."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.openai_completions import LocalCompletionsAPI

    pairs = job["pairs"]
    runs = []
    for config in job["configs"]:
        model = LocalCompletionsAPI(
            base_url=job["base_url"] + "/completions",
            model=job["model"],
            tokenizer=job["tokenizer"],
            tokenizer_backend="huggingface",
            max_length=job.get("max_length", 2048),
            max_retries=3,
            **config,
        )
        instances = [
            Instance(request_type="loglikelihood", doc={}, arguments=(context, continuation), idx=index)
            for index, (_, context, continuation) in enumerate(pairs)
        ]
        scored, seconds, counts = timed(job, model.loglikelihood, instances)
        by_question: dict[str, dict[str, float]] = {}
        for (question, _, continuation), (logprob, _) in zip(pairs, scored, strict=True):
            by_question.setdefault(question, {})[continuation] = logprob
        runs.append({"config": config, "seconds": seconds, "counts": counts, "logprobs": by_question})
    return {"runs": runs}


def lmeval_generate(job: dict[str, Any]) -> dict[str, Any]:
    """Job: base_url, model, chats [[question id, messages]], max_gen_toks, warmup, configs
    [{num_concurrent}]; each config's time, the server's counts and the texts."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    chats = job["chats"]
    runs = []
    for config in job["configs"]:
        model = LocalChatCompletion(
            base_url=job["base_url"] + "/chat/completions",
            model=job["model"],
            max_retries=3,
            **config,
        )
        settings = {"until": [], "max_gen_toks": job["max_gen_toks"], "do_sample": False, "temperature": 0}
        instances = [
            Instance(
                request_type="generate_until",
                doc={},
                arguments=(JsonChatStr(json.dumps(messages, ensure_ascii=False)), dict(settings)),
                idx=index,
            )
            for index, (_, messages) in enumerate(chats)
        ]
        texts, seconds, counts = timed(job, model.generate_until, instances)
        outputs = {question: text for (question, _), text in zip(chats, texts, strict=True)}
        runs.append({"config": config, "seconds": seconds, "counts": counts, "texts": outputs})
    return {"runs": runs}


def evalscope(job: dict[str, Any]) -> dict[str, Any]:
    """Job: base_url, model, data (a folder of <subset>_dev.csv / <subset>_val.csv), subsets, work_dir,
    concurrency, max_tokens; the run's time, its pool's time and each question's extracted letter."""
    import evalscope.evaluator.evaluator as evaluator_module
    from evalscope import TaskConfig, run_task

    pool_seconds: list[float] = []
    run_pool = evaluator_module.run_in_threads_with_progress

    def timed_pool(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return run_pool(*args, **kwargs)
        finally:
            pool_seconds.append(time.perf_counter() - started)

    evaluator_module.run_in_threads_with_progress = timed_pool  # type: ignore[assignment]
    logging.getLogger("evalscope").setLevel(logging.WARNING)
    config = TaskConfig(
        model=job["model"],
        api_url=job["base_url"],
        api_key="EMPTY",
        eval_type="openai_api",
        datasets=["general_mcq"],
        dataset_args={"general_mcq": {"local_path": job["data"], "subset_list": job["subsets"]}},
        eval_batch_size=job["concurrency"],
        work_dir=job["work_dir"],
        no_timestamp=True,
        generation_config={"max_tokens": job["max_tokens"], "temperature": 0},
    )
    before = server_counts(job["base_url"])
    started = time.perf_counter()
    run_task(config)
    seconds = time.perf_counter() - started
    counts = counted(job["base_url"], before)
    answers: dict[str, str] = {}
    requests = 0
    for subset in job["subsets"]:
        reviews = Path(job["work_dir"]) / "reviews" / job["model"] / f"general_mcq_{subset}.jsonl"
        for line in reviews.read_text(encoding="utf-8").splitlines():
            review = json.loads(line)
            score = review["sample_score"]
            answers[f"{subset}/{score['sample_metadata']['id']}"] = score["score"]["extracted_prediction"]
            requests += 1
    return {
        "seconds": seconds,
        "pool_seconds": sum(pool_seconds),
        "counts": counts,
        "answers": answers,
        "samples": requests,
    }


TOOLS = {"lmeval-loglik": lmeval_loglik, "lmeval-generate": lmeval_generate, "evalscope": evalscope}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool", choices=sorted(TOOLS))
    parser.add_argument("job", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    job = json.loads(args.job.read_text(encoding="utf-8"))
    result = TOOLS[args.tool](job)
    args.out.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
