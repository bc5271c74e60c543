"""kaoshi judge: grade a run's open answers with an LLM judge (careful / general / debate)."""

from __future__ import annotations

import argparse

from kaoshi.api import RunConfig
from kaoshi.api.judging import judge
from kaoshi.api.vocabulary import JUDGE_MODES
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.cli.config_options import add_config_options
from kaoshi.cli.progress import ProgressBar
from kaoshi.cli.run_cmd import add_backend_options, add_batch_options, backend_keywords, batch_policy


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("judge", help="grade the open answers of a run with an LLM judge")
    parser.add_argument("run")
    parser.add_argument(
        "--judge", required=True, help="the judge model, e.g. openai:gpt-4o, smollm2, mock:FILE"
    )
    parser.add_argument(
        "--mode",
        choices=JUDGE_MODES,
        default="careful",
        help="careful (default), general, debate, or gaokao (GAOKAO-Bench: 【总分】N分 of the item's points)",
    )
    parser.add_argument("--second-judge", help="debate: the second judge (default: the first)")
    parser.add_argument("--max-new-tokens", type=int, default=512, help="judge reply budget")
    add_config_options(parser, RunConfig, only=("seed", "batch_size"))  # the judges' load, as a run's model's
    add_backend_options(parser)
    add_batch_options(parser, fallback=False)
    add_store_option(parser)
    parser.set_defaults(handler=judge_command)


def judge_command(args: argparse.Namespace) -> int:
    # A debate's two rounds of judge calls: a bar each.
    labels = iter(("debate round 1", "debate round 2") if args.mode == "debate" else ())
    with ProgressBar("judging", "answer") as bar:
        outcome = judge(
            args.run,
            args.judge,
            store=existing_store_path(args),
            mode=args.mode,
            second_judge=args.second_judge,
            max_new_tokens=args.max_new_tokens,
            seed=args.seed,
            batch_size=args.batch_size,
            on_grade=bar.advance,
            on_plan=lambda total, done: bar.plan(total, done, next(labels, None)),
            batch=batch_policy(args, bar) if args.batch else None,
            **backend_keywords(args),
        )
    if outcome.asked == 0:  # nothing to ask: no judge model was even loaded
        eprint(f"{outcome.grader}: 0 graded, {outcome.already} already graded")
        return 0
    eprint(
        f"{outcome.grader}: {outcome.graded} graded, {outcome.unparsed} unparsed, {outcome.errors} error(s), "
        f"{outcome.already} already graded; {outcome.seconds:.1f} s"
    )
    return 0
