"""kaoshi run: evaluate a model on an exam into the store (resumable)."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

import kaoshi
from kaoshi.cli.common import add_store_option, eprint, open_store, store_path
from kaoshi.data import LoadResult, load_exam
from kaoshi.data.loaders import load_exemplars
from kaoshi.data.model import Exam
from kaoshi.data.shuffle import shuffle_exam
from kaoshi.finetune.adapter import check_overlap, run_record
from kaoshi.models import ModelOptions, resolve_model
from kaoshi.models.registry import default_chat_before_load
from kaoshi.prompts import Template, default_template_name, get_template
from kaoshi.prompts.registry import TEMPLATES, exemplars_for_run
from kaoshi.report import render_summary, summarize
from kaoshi.report.standard import parse_standard_scores
from kaoshi.runner import METHODS, execute_run
from kaoshi.scoring import MULTI_POLICIES
from kaoshi.store import RunSpec, SampleRecord, Store


def add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--benchmark", help="sample, qualbench, ceval, ceval-hard, kaoshi (default: from --data)"
    )
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


def add_scoring_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--multi-policy",
        choices=MULTI_POLICIES,
        default="exact",
        help="multiple choice: exact set (default), partial credit for a correct subset, or per-option F1",
    )
    parser.add_argument(
        "--partial-credit",
        type=float,
        default=0.5,
        help="share of the points a correct subset earns (partial)",
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


def check_scoring(args: argparse.Namespace) -> None:
    if not 0 <= args.partial_credit <= 1:
        raise ValueError("--partial-credit must be between 0 and 1")


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("backends")
    group.add_argument(
        "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or api.openai.com)"
    )
    group.add_argument(
        "--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key"
    )
    group.add_argument("--concurrency", type=int, default=8, help="API requests in flight at once")
    group.add_argument("--rpm", type=float, help="at most this many API requests per minute")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds before an API request times out")
    group.add_argument("--max-retries", type=int, default=6, help="retries of a failed API request")
    group.add_argument("--device", default="auto", help="hf: auto, cpu, cuda, cuda:1 ...")
    group.add_argument("--dtype", default="auto", help="hf/vllm: auto, float32, bfloat16, float16")
    group.add_argument("--max-length", type=int, help="context window override (tokens)")
    group.add_argument(
        "--trust-remote-code", action="store_true", help="hf/vllm: run the model repo's own code"
    )
    group.add_argument("--tensor-parallel-size", type=int, default=1, help="vllm: GPUs per model")


def model_options(args: argparse.Namespace) -> ModelOptions:
    return ModelOptions(
        seed=args.seed,
        batch_size=args.batch_size,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        concurrency=args.concurrency,
        requests_per_minute=args.rpm,
        timeout_s=args.timeout,
        max_retries=args.max_retries,
        device=args.device,
        dtype=args.dtype,
        trust_remote_code=args.trust_remote_code,
        max_length=args.max_length,
        tensor_parallel_size=args.tensor_parallel_size,
    )


def recorded_settings(options: ModelOptions) -> dict[str, object]:
    """The backend settings that can change a run's numbers, for the run spec (never a secret)."""
    settings = {
        "base_url": options.base_url,
        "dtype": options.dtype,
        "max_length": options.max_length,
        "trust_remote_code": options.trust_remote_code,
    }
    return {k: v for k, v in settings.items() if v not in (None, False, "auto")}


def template_from_args(args: argparse.Namespace, benchmark: str) -> tuple[Template, int]:
    template = get_template(args.prompt or default_template_name(benchmark))
    pinned = exemplar_ids(args)
    default = len(pinned) if pinned else template.default_shots
    shots = default if args.shots is None else args.shots
    if shots < 0:
        raise ValueError("--shots must be >= 0")
    return template, shots


def exemplar_ids(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(i.strip() for i in args.exemplars.split(",") if i.strip()) if args.exemplars else ()


def load_from_args(args: argparse.Namespace) -> LoadResult:
    subjects = [s.strip() for s in args.subjects.split(",")] if args.subjects else None
    return load_exam(
        args.benchmark, args.data, args.split, on_invalid=args.on_invalid, clean=args.clean, subjects=subjects
    )


def with_exemplars_file(exam: Exam, args: argparse.Namespace) -> tuple[Exam, str | None]:
    """The exam with --exemplars-file's questions as its few-shot pool, and the file's hash (or None)."""
    path = getattr(args, "exemplars_file", None)
    if path is None:
        return exam, None
    questions, digest = load_exemplars(path)
    return replace(exam, fewshot=questions), digest


def run_exemplars(template: Template, exam: Exam, args: argparse.Namespace) -> tuple[str, ...]:
    """The exemplar ids the run pins (a template's fixed demos are found once); notes shown as warnings."""
    pinned, notes = exemplars_for_run(template, exam, exemplar_ids(args))
    for note in notes:
        eprint(f"warning: {note}")
    return pinned


def load_named_exam(args: argparse.Namespace, usage: str) -> LoadResult:
    """The exam a file-writing command works on: a positional `input` (the same as --data) or --benchmark;
    load warnings and skipped rows reported."""
    if args.input:
        if args.data and args.data != args.input:
            raise ValueError("give the exam either as a path or as --data, not both")
        args.data = args.input
    if not args.data and not args.benchmark:
        raise ValueError(f"name the exam: {usage}")
    result = load_from_args(args)
    report_load(result)
    return result


def report_load(result: LoadResult) -> None:
    for warning in result.warnings:
        eprint(f"warning: {warning}")
    if result.errors:
        eprint(f"skipped {len(result.errors)} invalid row(s); first: {result.errors[0]}")
    if result.dropped:
        eprint(f"cleaning dropped {len(result.dropped)} question(s); first: {result.dropped[0].reason}")


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
    add_scoring_options(parser)
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


def adapter_for_run(path: Path, model: str, exam: Exam, allow_overlap: bool) -> dict[str, object]:
    """Check the adapter against the model and the evaluated questions; what the run spec records."""
    if model.partition(":")[0] not in ("hf", "gguf", "smollm2"):
        raise ValueError(f"--adapter needs a local transformers model (hf, gguf, smollm2), got {model!r}")
    manifest, overlap = check_overlap(path, exam.questions, allow_overlap)
    if manifest.get("base") not in (None, model):
        eprint(f"warning: the adapter was trained on {manifest['base']!r}, applied here to {model!r}")
    if overlap:
        eprint(
            f"warning: {overlap} evaluated question(s) were in the adapter's training data (--allow-overlap)"
        )
    return run_record(path, manifest, overlap)


def default_run_name(exam_name: str, split: str | None, model: str, method: str, shots: int) -> str:
    """`<exam>[-<split>]-<model>-<method>[-<N>shot]`, made safe for a file name."""
    parts = [exam_name, *([split] if split else []), model, method, *([f"{shots}shot"] if shots else [])]
    raw = "-".join(parts)
    return re.sub(r"[^\w.\-]+", "_", raw)


def _earlier_default_name(
    store: Store, name: str, spec: RunSpec, args: argparse.Namespace, exam_name: str, shots: int
) -> str:
    """The default name before it held the split, when only a run of that name exists and has this spec:
    the same command then resumes it instead of paying for every answer again."""
    legacy = default_run_name(exam_name, None, args.model, args.method, shots)
    earlier = store.find_run(legacy) if legacy != name and store.find_run(name) is None else None
    if earlier is None:
        return name
    differences = [d for d in earlier.spec.differences(spec) if d[0] != "chat"]
    if differences:
        shown = "; ".join(f"{field}: stored {old!r}, now {new!r}" for field, old, new in differences)
        eprint(
            f"note: the run {legacy!r} (the earlier default name) has another spec ({shown}); "
            f"starting {name!r}"
        )
        return name
    eprint(f"note: resuming the run {legacy!r} (named before default run names held the split)")
    return legacy


def run_command(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit <= 0:
        raise ValueError("--limit must be > 0")
    check_scoring(args)
    result = load_from_args(args)
    report_load(result)
    exam = result.exam.limited(args.limit)
    if args.shuffle_options is not None:
        exam = shuffle_exam(exam, args.shuffle_options)
    benchmark = str(exam.metadata.get("benchmark", args.benchmark or ""))
    template, shots = template_from_args(args, benchmark)
    exam, exemplars_file = with_exemplars_file(exam, args)
    pinned = run_exemplars(template, exam, args)
    options = model_options(args)
    adapter: dict[str, object] = {}
    if args.adapter is not None:
        adapter = adapter_for_run(args.adapter, args.model, exam, args.allow_overlap)
        options = replace(options, adapter=str(args.adapter))
    elif args.allow_overlap:
        raise ValueError("--allow-overlap is for runs with --adapter")
    effective_split = args.split or exam.metadata.get("split")
    objective_tokens, open_tokens = template.budget.resolved(args.max_new_tokens, args.max_new_tokens_open)
    chat = args.chat if args.chat is not None else default_chat_before_load(args.model)
    spec = RunSpec(
        benchmark=benchmark,
        data=args.data,
        split=effective_split,
        fingerprint=exam.fingerprint,
        n_questions=len(exam),
        prompt=template.name,
        prompt_version=template.version,
        shots=shots,
        model=args.model,
        method=args.method,
        seed=args.seed,
        limit=args.limit,
        max_new_tokens=objective_tokens,
        max_new_tokens_open=open_tokens,
        on_invalid=args.on_invalid,
        clean=args.clean,
        chat=bool(chat),
        system=args.system,
        exemplars=pinned,
        exemplars_file=exemplars_file,
        llm_extractor=args.llm_extractor,
        model_settings=recorded_settings(options),
        multi_policy=args.multi_policy,
        partial_credit=args.partial_credit,
        shuffle_seed=args.shuffle_options,
        adapter=adapter,
        standard_scores={**exam.metadata.get("standard_scores", {}), **(args.standard_score or {})},
        kaoshi_version=kaoshi.__version__,
    )
    name = args.run_name or default_run_name(exam.name, effective_split, args.model, args.method, shots)
    if args.run_name is None and args.shuffle_options is not None:
        name += f"-shuffled{args.shuffle_options}"
    if store_path(args).exists():
        # Refuse a changed spec before paying for the model load (minutes for a 7B model); a chat form
        # only the loaded model knows is checked again when the run opens.
        with open_store(args) as store:
            if args.run_name is None and args.shuffle_options is None:
                name = _earlier_default_name(store, name, spec, args, exam.name, shots)
            store.check_resumable(name, spec, ignore=frozenset({"chat"}) if chat is None else frozenset())
    model = resolve_model(args.model, options)
    if chat is None:
        spec = replace(spec, chat=model.default_chat)
    try:
        extractor = resolve_model(args.llm_extractor, options) if args.llm_extractor else None
    except BaseException:
        model.close()
        raise
    with open_store(args) as store:
        try:
            with _progress() as (on_plan, on_sample):
                outcome = execute_run(
                    name=name,
                    exam=exam,
                    spec=spec,
                    model=model,
                    template=template,
                    store=store,
                    on_sample=on_sample,
                    on_plan=on_plan,
                    extractor=extractor,
                )
        except KeyboardInterrupt:
            store.interrupt_run(name)
            done = len(store.finished_ids(name))
            eprint(f"interrupted: {done} sample(s) of run {name!r} are saved; run the same command to resume")
            return 130
        finally:
            model.close()
            if extractor is not None:
                extractor.close()
        eprint(
            f"run {name!r}: {outcome.new_samples} new, {outcome.already_done} already stored, "
            f"{outcome.errors} error(s); store {store.path}"
        )
        summary = summarize(name, store.iter_samples(name), ["type"]) if args.report else None
    if summary is not None:
        print(render_summary(summary, "table"))
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
