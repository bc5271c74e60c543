"""kaoshi rescore: re-extract and re-grade a stored run into a new run, without calling any model."""

from __future__ import annotations

import argparse

from kaoshi.api.rescoring import rescore
from kaoshi.api.summary import summarize
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.cli.progress import ProgressBar
from kaoshi.cli.run_cmd import add_scoring_options
from kaoshi.report import render_summary


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rescore", help="re-score stored responses into a new run (no model calls)"
    )
    parser.add_argument("run", help="the stored run to re-score (left unchanged)")
    parser.add_argument("--run-name", required=True, help="name of the new run")
    add_scoring_options(parser, unset="source run")
    extractor = parser.add_mutually_exclusive_group()
    extractor.add_argument(
        "--llm-extractor",
        metavar="MODEL",
        help="a model that reads the answers the rules leave unparsed (default: the run's own, whose "
        "stored replies are re-read without calls)",
    )
    extractor.add_argument(
        "--no-llm-extractor", action="store_true", help="rules only, even if the run used an LLM extractor"
    )
    add_store_option(parser)
    parser.set_defaults(handler=rescore_command)


def rescore_command(args: argparse.Namespace) -> int:
    with ProgressBar("rescoring", "sample") as bar:
        outcome = rescore(
            args.run,
            args.run_name,
            store=existing_store_path(args),
            multi_policy=args.multi_policy,
            partial_credit=args.partial_credit,
            llm_extractor=False if args.no_llm_extractor else args.llm_extractor,
            on_plan=bar.plan,
            on_sample=bar.advance,
        )
    eprint(
        f"rescored {args.run!r} into {args.run_name!r}: {outcome.samples} samples, "
        f"{outcome.changed} changed, {outcome.seconds:.2f} s, "
        + (f"extractor {args.llm_extractor!r} asked" if args.llm_extractor else "no model calls")
    )
    # as `kaoshi report NEW --by type` shows it: the benchmark's own numbers too
    print(render_summary(summarize(args.run_name, store=existing_store_path(args), by=["type"]), "table"))
    return 0
