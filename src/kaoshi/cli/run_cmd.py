"""kaoshi run: evaluate a model on an exam into the store (resumable)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from kaoshi.api import LoadResult, ModelOptions, RunOptions, SampleRecord, load_exam_result, parse_shard
from kaoshi.api.evaluation import RunInterrupted, evaluate_prepared
from kaoshi.api.exams import load_notes
from kaoshi.api.vocabulary import METHODS, MULTI_POLICIES, TEMPLATES
from kaoshi.benchmarks import benchmark_names
from kaoshi.cli.common import add_store_option, eprint, store_path
from kaoshi.errors import InputError
from kaoshi.report import render_summary
from kaoshi.report.aggregate import summarize as tally_samples
from kaoshi.report.standard import parse_standard_scores


def add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--benchmark", help=f"{', '.join(benchmark_names())} (default: from --data)")
    parser.add_argument("--data", help="file or folder; without it, hub benchmarks load from Hugging Face")
    parser.add_argument(
        "--split", help="split to evaluate (C-Eval: dev/val/test; kaoshi JSONL: its split field)"
    )
    parser.add_argument("--subjects", help="comma-separated C-Eval subjects to load")
    parser.add_argument(
        "--on-invalid", choices=("fail", "skip"), default="fail", help="bad rows: stop or skip"
    )
    parser.add_argument("--clean", action="store_true", help="QualBench: apply the authors' cleaning rule")


def add_prompt_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompt", help="template name or file:PATH.j2 (default: the benchmark's own)")
    parser.add_argument(
        "--shots", type=int, help="solved exemplars from the dev pool (default: the template's)"
    )
    parser.add_argument(
        "--chat",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send chat messages (--chat) or plain text (--no-chat); default: the backend's",
    )
    parser.add_argument("--system", help="a system prompt (chat) or text before the prompt (completion)")
    parser.add_argument("--exemplars", help="comma-separated question ids to use as the solved exemplars")
    parser.add_argument(
        "--exemplars-file",
        type=Path,
        metavar="FILE",
        help="solved exemplars from a kaoshi JSONL file, for any template (its hash is in the run spec)",
    )


def add_scoring_options(parser: argparse.ArgumentParser, *, unset: Literal["exam", "source run"]) -> None:
    """--multi-policy and --partial-credit; `unset` says what an option left out means: the exam's own
    rule (kaoshi run), or the value the source run recorded (kaoshi rescore)."""
    from_source = unset == "source run"
    parser.add_argument(
        "--multi-policy",
        choices=MULTI_POLICIES,
        default=None,
        help=(
            "multiple choice: exact set, partial credit for a correct subset, or per-option F1 (default: "
            + (
                "the source run's)"
                if from_source
                else "the benchmark's own rule, gaokao-bench: partial; else exact)"
            )
        ),
    )
    parser.add_argument(
        "--partial-credit",
        type=float,
        default=None if from_source else 0.5,
        help="share of the points a correct subset earns (partial; default: "
        + ("the source run's)" if from_source else "0.5)"),
    )


def add_standard_score_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--standard-score",
        metavar="SUBJECT=N,...",
        type=standard_scores_arg,
        help="scale each subject's points to a standard score (overrides the exam file's standard_scores)",
    )


def standard_scores_arg(text: str) -> dict[str, float]:
    try:
        return parse_standard_scores(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def shard_arg(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("backends")
    group.add_argument(
        "--base-url",
        action="append",
        help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or api.openai.com); repeat it to spread "
        "requests over several servers",
    )
    group.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key"
    )
    group.add_argument("--concurrency", type=int, default=8, help="API requests in flight at once")
    group.add_argument("--rpm", type=float, help="at most this many API requests per minute")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds before an API request times out")
    group.add_argument("--max-retries", type=int, default=6, help="retries of a failed API request")
    group.add_argument(
        "--max-wait",
        type=float,
        metavar="SECONDS",
        help="the longest wait a server's Retry-After may ask for (default: --timeout x --max-retries)",
    )
    group.add_argument(
        "--max-reply-chars",
        type=int,
        default=500_000,
        help="the longest API reply text kept; a longer one is an error sample (default 500,000)",
    )
    group.add_argument("--device", default="auto", help="hf: auto, cpu, cuda, cuda:1 ...")
    group.add_argument("--dtype", default="auto", help="hf/vllm: auto, float32, bfloat16, float16")
    group.add_argument("--max-length", type=int, help="context window override (tokens)")
    group.add_argument(
        "--trust-remote-code", action="store_true", help="hf/vllm: run the model repo's own code"
    )
    group.add_argument("--tensor-parallel-size", type=int, default=1, help="vllm: GPUs per model")
    scale = parser.add_argument_group("data parallelism (Ray: pip install 'kaoshi[ray]')")
    scale.add_argument("--ray", action="store_true", help="run the backend in Ray actors")
    scale.add_argument("--replicas", type=int, default=1, help="backend replicas, one Ray actor each")
    scale.add_argument("--gpus-per-replica", type=float, default=0, help="GPUs each replica holds")
    scale.add_argument("--ray-address", help="join this Ray cluster (e.g. auto, ray://head:10001)")


def backend_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The backend options as `kaoshi.evaluate` / `kaoshi.judge` take them (ModelOptions fields)."""
    return {
        "base_url": None
        if not args.base_url
        else args.base_url[0]
        if len(args.base_url) == 1
        else tuple(args.base_url),
        "api_key_env": args.api_key_env,
        "concurrency": args.concurrency,
        "requests_per_minute": args.rpm,
        "timeout_s": args.timeout,
        "max_retries": args.max_retries,
        "max_wait_s": args.max_wait,
        "max_reply_chars": args.max_reply_chars,
        "device": args.device,
        "dtype": args.dtype,
        "trust_remote_code": args.trust_remote_code,
        "max_length": args.max_length,
        "tensor_parallel_size": args.tensor_parallel_size,
        "ray": args.ray,
        "replicas": args.replicas,
        "gpus_per_replica": args.gpus_per_replica,
        "ray_address": args.ray_address,
    }


def model_options(args: argparse.Namespace) -> ModelOptions:
    adapter = str(args.adapter) if args.adapter is not None else None
    return ModelOptions(seed=args.seed, batch_size=args.batch_size, adapter=adapter, **backend_keywords(args))


def exemplar_ids(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(i.strip() for i in args.exemplars.split(",") if i.strip()) if args.exemplars else ()


def load_from_args(args: argparse.Namespace) -> LoadResult:
    subjects = [s.strip() for s in args.subjects.split(",")] if args.subjects else None
    return load_exam_result(
        args.benchmark, args.data, args.split, on_invalid=args.on_invalid, clean=args.clean, subjects=subjects
    )


def load_named_exam(args: argparse.Namespace, usage: str) -> LoadResult:
    """The exam a file-writing command works on: a positional `input` (the same as --data) or --benchmark;
    load warnings and skipped rows reported."""
    if args.input:
        if args.data and args.data != args.input:
            raise InputError("give the exam either as a path or as --data, not both")
        args.data = args.input
    if not args.data and not args.benchmark:
        raise InputError(f"name the exam: {usage}")
    result = load_from_args(args)
    report_load(result)
    return result


def report_load(result: LoadResult) -> None:
    for line in load_notes(result):
        eprint(line)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("run", help="evaluate a model on an exam (resumes a run of the same name)")
    add_load_options(parser)
    parser.add_argument(
        "--model",
        required=True,
        help="hf:ID_OR_FOLDER, gguf:FILE, smollm2, openai:MODEL (--base-url), llamacpp:FILE, vllm:ID, "
        "random, constant:X, mock:FILE, py:MODULE:CLASS[:ARG]",
    )
    parser.add_argument("--method", choices=METHODS, default="generate")
    add_prompt_options(parser)
    parser.add_argument("--limit", type=int, help="evaluate only the first N questions")
    parser.add_argument(
        "--shuffle-options",
        type=int,
        metavar="SEED",
        help="permute each choice question's options (contamination check; see kaoshi contamination)",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        type=shard_arg,
        help="evaluate only shard I of N of the questions (by question id; join with kaoshi merge)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        metavar="N",
        help=f"new tokens for every generated answer (default: the prompt's own budget: {budget_help()})",
    )
    parser.add_argument(
        "--max-new-tokens-open",
        type=int,
        metavar="N",
        help="new tokens for open (subjective) answers (default: --max-new-tokens, else the protocol's)",
    )
    parser.add_argument("--batch-size", type=int, help="requests per model call (default: the backend's)")
    add_scoring_options(parser, unset="exam")
    add_standard_score_option(parser)
    add_backend_options(parser)
    parser.add_argument(
        "--llm-extractor",
        metavar="SPEC",
        help="a model that reads answers the rules leave unparsed (off by default)",
    )
    parser.add_argument(
        "--adapter", type=Path, help="a LoRA adapter folder from kaoshi finetune (hf, gguf, smollm2 models)"
    )
    parser.add_argument(
        "--allow-overlap",
        action="store_true",
        help="evaluate even questions the adapter was trained on (recorded in the run spec)",
    )
    parser.add_argument(
        "--run-name", help="default: <exam>-<split>-<model>-<method>-<N>shot; the same name resumes"
    )
    parser.add_argument(
        "--join",
        action="store_true",
        help="when another process is running this run, work beside it on the questions it has not claimed",
    )
    parser.add_argument(
        "--report",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="print the run's summary when it ends (--no-report: only the one-line count)",
    )
    add_store_option(parser)
    parser.set_defaults(handler=run_command)


def budget_help() -> str:
    """Each built-in prompt's generation budget, for `run --help`."""
    by_budget: dict[str, list[str]] = {}
    for name, template in TEMPLATES.items():
        by_budget.setdefault(template.budget.describe(), []).append(name)
    return "; ".join(f"{', '.join(names)}: {budget}" for budget, names in by_budget.items())


def run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(
        method=args.method,
        prompt=args.prompt,
        shots=args.shots,
        chat=args.chat,
        system=args.system,
        exemplars=exemplar_ids(args),
        exemplars_file=args.exemplars_file,
        limit=args.limit,
        shuffle_options=args.shuffle_options,
        seed=args.seed,
        max_new_tokens=args.max_new_tokens,
        max_new_tokens_open=args.max_new_tokens_open,
        multi_policy=args.multi_policy,
        partial_credit=args.partial_credit,
        standard_scores=args.standard_score or {},
        llm_extractor=args.llm_extractor,
        adapter=args.adapter,
        allow_overlap=args.allow_overlap,
        shard=args.shard,
    )


def run_command(args: argparse.Namespace) -> int:
    options = run_options(args)
    options.check()  # before the exam loads
    result = load_from_args(args)
    report_load(result)
    try:
        with _progress() as (on_plan, on_sample):
            evaluated = evaluate_prepared(
                result.exam,
                args.model,
                options,
                model_options(args),
                run_name=args.run_name,
                store=store_path(args),
                notify=eprint,
                join=args.join,
                on_sample=on_sample,
                on_plan=on_plan,
            )
    except RunInterrupted as stopped:
        eprint(
            f"interrupted: {stopped.saved} sample(s) of run {stopped.name!r} are saved; "
            "run the same command to resume"
        )
        return 130
    eprint(
        f"run {evaluated.name!r}: {evaluated.new_samples} new, {evaluated.already_done} already stored, "
        f"{evaluated.errors} error(s); store {evaluated.store}"
    )
    if args.report:
        print(render_summary(tally_samples(evaluated.name, evaluated.samples, ["type"]), "table"))
    return 0


class _progress:
    """A progress bar with rate and ETA on terminals; silent otherwise."""

    def __init__(self) -> None:
        console = Console(file=sys.stderr)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            console=console,
            disable=not console.is_terminal,
            transient=False,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> tuple[Callable[[int, int], None], Callable[[SampleRecord], None]]:
        self._progress.__enter__()
        return self._on_plan, self._on_sample

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(None, None, None)

    def _on_plan(self, total: int, done: int) -> None:
        self._task = self._progress.add_task("evaluating", total=total, completed=done, rate="")

    def _on_sample(self, sample: SampleRecord) -> None:
        if self._task is None:
            return
        self._progress.advance(self._task)
        speed = self._progress.tasks[self._task].speed
        self._progress.update(self._task, rate=f"{speed:.1f} q/s" if speed else "")
