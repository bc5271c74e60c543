"""kaoshi rescore: re-extract and re-grade a stored run into a new run, without calling any model."""

from __future__ import annotations

import argparse

from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.cli.run_cmd import add_scoring_options, check_scoring
from kaoshi.report import render_summary, summarize
from kaoshi.runner.rescore import rescore_run


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rescore", help="re-score stored responses into a new run (no model calls)"
    )
    parser.add_argument("run", help="the stored run to re-score (left unchanged)")
    parser.add_argument("--run-name", required=True, help="name of the new run")
    add_scoring_options(parser)
    add_store_option(parser)
    parser.set_defaults(handler=rescore_command)


def rescore_command(args: argparse.Namespace) -> int:
    check_scoring(args)
    with open_existing_store(args) as store:
        outcome = rescore_run(
            store, args.run, args.run_name, multi_policy=args.multi_policy, partial_credit=args.partial_credit
        )
        eprint(
            f"rescored {args.run!r} into {args.run_name!r}: {outcome.samples} samples, "
            f"{outcome.changed} changed, {outcome.seconds:.2f} s, no model calls"
        )
        summary = summarize(args.run_name, store.iter_samples(args.run_name), ["type"])
    print(render_summary(summary, "table"))
    return 0
