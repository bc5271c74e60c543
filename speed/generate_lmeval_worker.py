"""lm-evaluation-harness's `generate_until` on prompts kaoshi rendered, in its own process.

    python generate_lmeval_worker.py MODEL_DIR PROMPTS.jsonl OUT.json --batch-size B --max-gen-toks N

Run with lm-eval's interpreter (speed/.venv-lmeval). PROMPTS.jsonl holds one question a line:
{"id", "prompt", "ids"}: the exact text kaoshi's model reads (chat template already applied) and kaoshi's
token ids for it. The local task's `doc_to_text` is the stored prompt, zero shots, no description, no chat
template; greedy, `max_gen_toks` = kaoshi's budget and a stop string that cannot occur, so generation
ends only at the model's end token (which lm-eval adds to `until` itself) or the budget, as kaoshi's does.
The model is loaded before the clock; `seconds` is the time inside `HFLM.generate_until`, `total_seconds`
the whole `simple_evaluate` (task building included).
OUT.json: {"seconds", "total_seconds", "peak_rss_mib", "outputs": {id: text}, "same_context": n,
"same_ids": n, "questions": n}
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

NEVER = "\x00kaoshi-never\x00"  # a stop string no generated text contains


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", help="a transformers model folder (kaoshi's converted GGUF copy)")
    parser.add_argument("prompts", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--batch-size", default="1")
    parser.add_argument("--max-gen-toks", type=int, required=True)
    args = parser.parse_args()

    import yaml
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    docs = [json.loads(line) for line in args.prompts.read_text(encoding="utf-8").splitlines()]
    tasks_dir = args.prompts.parent / f"{args.prompts.stem}-lmeval-task"
    tasks_dir.mkdir(exist_ok=True)
    name = f"kaoshi_generate_{args.prompts.stem.replace('-', '_')}"
    task = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(args.prompts)}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_text": "prompt",  # a column name: the stored text as it is
        "doc_to_target": "id",
        "generation_kwargs": {"until": [NEVER], "max_gen_toks": args.max_gen_toks, "do_sample": False},
        "metric_list": [{"metric": "exact_match"}],
    }
    (tasks_dir / f"{name}.yaml").write_text(yaml.safe_dump(task, allow_unicode=True), encoding="utf-8")

    batch_size: Any = args.batch_size if args.batch_size == "auto" else int(args.batch_size)
    model = HFLM(pretrained=args.model, dtype="float32", device="cpu", batch_size=batch_size)
    # The token ids lm-eval will feed the model (the same call its generate_until makes), against kaoshi's.
    same_ids = 0
    for doc in docs:
        encoded, mask = model.tok_batch_encode([doc["prompt"]])
        same_ids += encoded[0][mask[0].bool()].tolist() == doc["ids"]

    spent: list[float] = []
    generate_until = model.generate_until

    def timed(requests: Any, *rest: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = generate_until(requests, *rest, **kwargs)
        spent.append(time.perf_counter() - started)
        return result

    model.generate_until = timed  # type: ignore[method-assign]
    manager = TaskManager(include_path=str(tasks_dir))
    started = time.perf_counter()
    results = simple_evaluate(
        model=model,
        tasks=[name],
        num_fewshot=0,
        task_manager=manager,
        log_samples=True,
        batch_size=batch_size,
    )
    total = time.perf_counter() - started
    assert results is not None
    prompts = {doc["id"]: doc["prompt"] for doc in docs}
    outputs, same_context = {}, 0
    for sample in results["samples"][name]:
        qid = sample["doc"]["id"]
        outputs[qid] = sample["resps"][0][0]
        arguments = sample["arguments"]
        context = (
            arguments[0][0] if isinstance(arguments, (list, tuple)) else arguments["gen_args_0"]["arg_0"]
        )
        same_context += context == prompts[qid]
    args.out.write_text(
        json.dumps(
            {
                "seconds": sum(spent),
                "total_seconds": total,
                "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "outputs": outputs,
                "questions": len(docs),
                "same_context": same_context,
                "same_ids": same_ids,
                "batch_size": args.batch_size,
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
