"""kaoshi rescore: re-extract and re-grade a stored run into a new run, without calling any model."""

from __future__ import annotations

import argparse

from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.cli.run_cmd import add_scoring_options, check_scoring
from kaoshi.models import ModelOptions, resolve_model
from kaoshi.report import render_summary, summarize
from kaoshi.runner.rescore import rescore_run


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "rescore", help="re-score stored responses into a new run (no model calls)"
    )
    parser.add_argument("run", help="the stored run to re-score (left unchanged)")
    parser.add_argument("--run-name", required=True, help="name of the new run")
    add_scoring_options(parser)
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
    check_scoring(args)
    with open_existing_store(args) as store:
        changes: dict[str, object] = {
            "multi_policy": args.multi_policy,
            "partial_credit": args.partial_credit,
        }
        extractor = None
        if args.no_llm_extractor:
            changes["llm_extractor"] = None
        elif args.llm_extractor:
            changes["llm_extractor"] = args.llm_extractor
            extractor = resolve_model(args.llm_extractor, ModelOptions())
        outcome = rescore_run(store, args.run, args.run_name, extractor, **changes)
        eprint(
            f"rescored {args.run!r} into {args.run_name!r}: {outcome.samples} samples, "
            f"{outcome.changed} changed, {outcome.seconds:.2f} s, "
            + (f"extractor {args.llm_extractor!r} asked" if extractor else "no model calls")
        )
        summary = summarize(args.run_name, store.iter_samples(args.run_name), ["type"])
    print(render_summary(summary, "table"))
    return 0
