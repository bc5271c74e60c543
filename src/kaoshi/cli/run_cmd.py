"""kaoshi run: evaluate a model on an exam into the store (resumable)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

from kaoshi.api import LoadResult, ModelOptions, RunConfig, load_exam_result, model_spec_help
from kaoshi.api.costs import Price, Usage, estimate_prepared, run_usage, sample_cost, worst_margin
from kaoshi.api.evaluation import (
    BATCH_FALLBACKS,
    BATCH_MAX_BYTES,
    BATCH_MAX_LINES,
    BatchesUnanswered,
    BatchPolicy,
    BatchWait,
    CachePolicy,
    RunCapped,
    RunInterrupted,
    evaluate_prepared,
    spending_of,
)
from kaoshi.api.exams import load_notes
from kaoshi.api.vocabulary import option_fields
from kaoshi.benchmarks import benchmark_names
from kaoshi.cli.common import add_store_option, eprint, price_option, store_path
from kaoshi.cli.config_options import add_config_options, config_values, read_config
from kaoshi.cli.progress import ProgressBar
from kaoshi.errors import InputError
from kaoshi.report import render_summary


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


# The option groups other commands share; each option is generated from its RunConfig / ModelOptions field.
PROMPT_OPTIONS = ("prompt", "shots", "chat", "system", "exemplars", "exemplars_file")
SCORING_OPTIONS = ("multi_policy", "partial_credit")


def add_prompt_options(parser: argparse.ArgumentParser) -> None:
    add_config_options(parser, RunConfig, only=PROMPT_OPTIONS)


def add_scoring_options(parser: argparse.ArgumentParser, *, unset: Literal["exam", "source run"]) -> None:
    """--multi-policy and --partial-credit; `unset` says what an option left out means: the exam's own
    rule (kaoshi run), or the value the source run recorded (kaoshi rescore)."""
    shown = "the source run's" if unset == "source run" else None
    add_config_options(parser, RunConfig, only=SCORING_OPTIONS, unset=shown)


# The backend settings, listed under their help sections (--base-url, --device, the Ray options, ...): what
# another command that loads a model (kaoshi judge) shares with kaoshi run. Seed, batch size and adapter,
# also ModelOptions fields, are among each command's own options, added where it lists them.
BACKEND_SETTINGS = tuple(field.name for field, option in option_fields(ModelOptions) if option.group)


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    add_config_options(parser, ModelOptions, only=BACKEND_SETTINGS)


def backend_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The backend settings as `kaoshi.judge` takes them (ModelOptions fields)."""
    return config_values(ModelOptions, args, only=BACKEND_SETTINGS)


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


# A run stopped at its cost cap (--max-cost): not finished, not failed; the same command goes on.
EXIT_CAPPED = 3


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("run", help="evaluate a model on an exam (resumes a run of the same name)")
    add_load_options(parser)
    parser.add_argument(
        "--model",
        required=True,
        help=model_spec_help(),
    )
    add_config_options(parser, RunConfig)  # every run option (backends' too), from RunConfig's fields
    parser.add_argument(
        "--run-name",
        help="default: <exam>-<split>-<model>-<method>-<N>shot[-limit<N>][-total<N>]; the same name resumes",
    )
    parser.add_argument(
        "--join",
        action="store_true",
        help="when another process is running this run, work beside it on the questions it has not claimed",
    )
    parser.add_argument(
        "--estimate",
        action="store_true",
        help="send nothing: print the requests, their prompt tokens and (with --price) what they would cost",
    )
    parser.add_argument(
        "--price",
        type=price_option,
        metavar="IN,OUT[,CACHED]|FILE",
        help="prices per million prompt, completion and cached prompt tokens (a batch endpoint's, for "
        'one), or a prices file (JSON: model -> "IN,OUT[,CACHED]"): the cost of --estimate, and of the '
        "run's answers",
    )
    parser.add_argument(
        "--max-cost",
        type=float,
        metavar="X",
        help="send nothing more once the run's answers (earlier sessions' too) cost X at --price; what is in "
        "flight is still stored, and the same command without it (or with more) goes on",
    )
    parser.add_argument(
        "--cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="take the answer to a request already answered (same model, prompt, budget, decoding, seed) "
        "from the store instead of asking again; default: on for a provider's model (openai:), off for "
        "local ones",
    )
    parser.add_argument(
        "--cache-sampled",
        action="store_true",
        help="sampled requests (--temperature > 0) from the cache too (a sampled answer is one draw)",
    )
    parser.add_argument(
        "--cache-from",
        action="append",
        type=Path,
        default=[],
        metavar="STORE",
        help="also take cached answers from this store (repeatable), after the run's own store",
    )
    add_batch_options(parser)
    parser.add_argument(
        "--report",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="print the run's summary when it ends (--no-report: only the one-line count)",
    )
    add_store_option(parser)
    parser.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    config = read_config(RunConfig, args)  # a bad backend value stops here, before the exam loads
    config.check()
    result = load_from_args(args)
    report_load(result)
    cache = CachePolicy(args.cache, args.cache_sampled, tuple(args.cache_from))
    for path in cache.stores:  # before the model loads and the run is written
        if not path.is_file():
            raise InputError(f"--cache-from {path}: no such store")
    if cache.stores and args.cache is None:
        eprint("note: --cache-from is read where the cache is on: for a provider's model, or with --cache")
    if args.cache_sampled and config.temperature == 0:
        eprint("note: --cache-sampled: this run is greedy (--temperature 0), its requests are not sampled")
    price = args.price.for_model(args.model) if args.price is not None else None
    if args.estimate:
        return _estimate(args, result, config, cache, price)
    spending = spending_of(price, args.max_cost)
    try:
        cost_of = None if price is None else partial(sample_cost, price)
        with ProgressBar("evaluating", "q", cost_of=cost_of) as bar:
            batch = batch_policy(args, bar) if args.batch else None
            evaluated = evaluate_prepared(
                result.exam,
                args.model,
                config,
                run_name=args.run_name,
                store=store_path(args),
                notify=eprint,
                join=args.join,
                on_sample=bar.advance,
                on_plan=bar.plan,
                spending=spending,
                cache=cache,
                batch=batch,
            )
    except RunCapped as capped:
        eprint(
            f"stopped at the cost cap: run {capped.name!r} spent {capped.spent:,.4f} of {capped.cap:,.4f} "
            f"(what was in flight is stored); {capped.saved} sample(s) saved. The same command without "
            "--max-cost, or with a higher one, goes on"
        )
        return EXIT_CAPPED
    except BatchesUnanswered as unanswered:
        eprint(f"error: {unanswered}")
        return 1
    except RunInterrupted as stopped:
        eprint(
            f"interrupted: {stopped.saved} sample(s) of run {stopped.name!r} are saved; "
            "run the same command to resume"
        )
        return 130
    reused = f"{evaluated.reused} reused from {evaluated.spec.reused_from}, " if evaluated.reused else ""
    if evaluated.cached:
        reused += f"{evaluated.cached} from the cache (answered before, not paid again), "
    eprint(
        f"run {evaluated.name!r}: {evaluated.new_samples} new, {reused}{evaluated.already_done} already "
        f"stored, {evaluated.errors} error(s); store {evaluated.store}"
    )
    causes = evaluated.error_causes()
    if causes:  # what the server did, in one line
        cause, count = causes[0]
        others = (
            f"; {len(causes) - 1} other cause(s): kaoshi samples {evaluated.name} --status error"
            if len(causes) > 1
            else ""
        )
        eprint(
            f"errors: {cause[:300]} ({count} of {evaluated.errors}){others}; the same command asks them again"
        )
    overall = evaluated.summary.overall
    if overall.graded and overall.truncated > overall.graded / 100:  # more than 1%: the budget is too small
        eprint(
            f"warning: {overall.truncated} of {overall.graded} answers were cut off at the token budget "
            "(graded wrong); a reasoning model needs thousands of tokens: the same command with "
            f"--max-new-tokens 8192 --reuse-from {evaluated.name} --run-name {evaluated.name}-8k asks only "
            "those again"
        )
    if price is not None and evaluated.store is not None:
        usage = run_usage(evaluated.name, store=evaluated.store)
        eprint(f"cost: {_usage_line(usage, price)}")
    if args.report:
        # the run's summary (its benchmark's statistics, its settings), grouped by question type only
        by_type = replace(evaluated.summary, groups={"type": evaluated.summary.groups.get("type", {})})
        print(render_summary(by_type, "table"))
    return 0


def _estimate(
    args: argparse.Namespace, loaded: LoadResult, config: RunConfig, cache: CachePolicy, price: Price | None
) -> int:
    """kaoshi run --estimate: what the run would send, nothing sent, nothing written."""
    estimate = estimate_prepared(
        loaded.exam, args.model, config, run_name=args.run_name,
        store=store_path(args), price=price, cache=cache, batch=args.batch,
    )  # fmt: skip
    stored = f" ({estimate.stored} answered already, stored or in the cache)" if estimate.stored else ""
    print(f"run {estimate.run!r} would send {estimate.requests} request(s) to {estimate.model}{stored}")
    print(f"prompt tokens: {estimate.prompt_tokens:,} ({estimate.counted_by})")
    print(f"new tokens allowed: at most {estimate.budget_tokens:,} (each answer's budget)")
    costs = estimate.cost_range
    if costs is not None and price is not None:
        low, high = costs
        batched = f", in batches at {price.batch:g} of it" if args.batch else ""
        print(
            f"cost: {low:,.4f} for the prompts, up to {high:,.4f} if every answer used its whole budget "
            f"({price.describe()}{batched}; no prompt token cached)"
        )
    else:
        print("cost: give --price IN,OUT[,CACHED] (per million tokens) to price it")
    if config.sample is None and estimate.requests >= SUGGEST_SAMPLE_FROM:
        share = SUGGESTED_SAMPLE / estimate.requests
        cost = f", about {costs[1] * share:,.4f} at most" if costs is not None else ""
        margin = worst_margin(SUGGESTED_SAMPLE, estimate.requests)
        print(
            f"to estimate the exam's accuracy for {share:.0%} of that{cost}: --sample {SUGGESTED_SAMPLE} "
            "--seed 0 (a stratified random sample; the report gives the estimate within about "
            f"±{100 * margin:.1f} points at 95%)"
        )
    return 0


# --estimate suggests --sample for runs of this many requests and up, and this size of sample.
SUGGEST_SAMPLE_FROM = 2_000
SUGGESTED_SAMPLE = 400


def add_batch_options(parser: argparse.ArgumentParser, *, fallback: bool = True) -> None:
    """--batch and its settings (kaoshi run, kaoshi judge: `fallback` is the run's alone)."""
    parser.add_argument(
        "--batch",
        action="store_true",
        help="send the requests through the provider's batch endpoint (openai:, e.g. OpenAI, Alibaba "
        "Model Studio) at its batch price (half), and wait for the batches (up to 24 h); killed while it "
        "waits, the same command polls the same batches again",
    )
    if fallback:
        parser.add_argument(
            "--batch-fallback",
            choices=BATCH_FALLBACKS,
            default="batch",
            help="requests no batch answered in --batch-rounds batches: left unasked (batch: the run stays "
            "unfinished, the same command sends them again) or asked in real time (realtime)",
        )
    parser.add_argument(
        "--batch-rounds",
        type=int,
        default=3,
        metavar="N",
        help="batches a request may be sent in, this command, before it is given up (a line a batch failed, "
        "or left undone when it expired or was cancelled, is sent again in a new batch)",
    )
    parser.add_argument(
        "--batch-poll",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds between two polls of the batches",
    )
    parser.add_argument(
        "--batch-max-lines",
        type=int,
        default=BATCH_MAX_LINES,
        metavar="N",
        help=f"requests in one batch's input file at most (default {BATCH_MAX_LINES:,}, OpenAI's limit; "
        "Alibaba Model Studio's batch-test-model takes 100)",
    )
    parser.add_argument(
        "--batch-max-mb",
        type=float,
        default=BATCH_MAX_BYTES / 2**20,
        metavar="MB",
        help=f"megabytes in one batch's input file at most (default {BATCH_MAX_BYTES / 2**20:g}, under "
        "OpenAI's 200)",
    )


def batch_policy(args: argparse.Namespace, bar: ProgressBar) -> BatchPolicy:
    """--batch's settings; while the run waits, each poll's state on the progress line (a terminal), or a
    line on stderr each time the batches' statuses change (a log)."""
    if args.batch_rounds < 1:
        raise InputError("--batch-rounds must be at least 1")
    if args.batch_poll < 0:
        raise InputError("--batch-poll must be >= 0 seconds")
    if args.batch_max_lines < 1 or args.batch_max_mb <= 0:
        raise InputError("--batch-max-lines and --batch-max-mb must be positive")
    shown: list[tuple[tuple[str, int], ...]] = []

    def on_wait(wait: BatchWait) -> None:
        if bar.status("waiting on " + wait.describe()):
            return
        if not shown or shown[-1] != wait.statuses:
            shown.append(wait.statuses)
            eprint("waiting on " + wait.describe())

    # kaoshi judge has no fallback: a call no batch answered is an error grade, asked again next time
    fallback = getattr(args, "batch_fallback", "batch")
    return BatchPolicy(
        poll_s=args.batch_poll,
        rounds=args.batch_rounds,
        fallback=fallback,
        max_lines=args.batch_max_lines,
        max_bytes=int(args.batch_max_mb * 2**20),
        on_wait=on_wait,
    )


def _usage_line(usage: Usage, price: Price) -> str:
    """A run's cost in one line, with the tokens it is made of."""
    notes = ""
    if usage.uncounted:
        notes += f"; {usage.uncounted} came without usage from their server, not counted"
    if usage.taken:
        notes += f"; {usage.taken} taken from other runs or the cache, paid for there"
    if usage.batched:
        notes += f"; {usage.batched} answered by batches, at {price.batch:g} of the price"
    return (
        f"{usage.cost(price):,.4f} for {usage.prompt:,} prompt tokens ({usage.cached:,} cached) and "
        f"{usage.completion:,} completion tokens ({usage.reasoning:,} reasoning) of "
        f"{usage.answers - usage.taken} answer(s), at {price.describe()}{notes}"
    )
