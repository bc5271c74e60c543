"""kaoshi vote: combine stored answers of several runs (majority, accuracy-weighted, Dawid-Skene)."""

from __future__ import annotations

import argparse

from kaoshi.api.studies import vote
from kaoshi.api.vocabulary import VOTE_METHODS
from kaoshi.cli.common import add_store_option, eprint, store_path
from kaoshi.cli.progress import ProgressBar
from kaoshi.report import FORMATS
from kaoshi.report.compare import render_comparison


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "vote", help="combine several runs' answers per question into a new run, compared with its members"
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="the member runs (earlier ones win ties)")
    parser.add_argument("--method", choices=VOTE_METHODS, default="majority")
    weights = parser.add_mutually_exclusive_group()
    weights.add_argument(
        "--in-sample",
        action="store_true",
        help="weighted: accuracies on the voted questions themselves (the paper's protocol; optimistic)",
    )
    weights.add_argument(
        "--weights-from",
        metavar="RUN,RUN,...",
        help="weighted: each member's accuracy on these runs instead (e.g. the same models on a dev split)",
    )
    parser.add_argument("--run-name", help="the vote's run name (default: vote-<method>)")
    parser.add_argument(
        "--by", action="append", choices=("domain", "type", "subject"), help="default: domain, type"
    )
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument("--resamples", type=int, default=10_000, help="paired bootstrap resamples")
    add_store_option(parser)
    parser.set_defaults(handler=vote_command)


def vote_command(args: argparse.Namespace) -> int:
    weights_from = [r.strip() for r in args.weights_from.split(",")] if args.weights_from else None
    with ProgressBar("voting", "q") as bar:
        result = vote(
            args.runs,
            store=store_path(args),
            method=args.method,
            in_sample=args.in_sample,
            weights_from=weights_from,
            run_name=args.run_name,
            by=args.by or ["domain", "type"],
            notify=eprint,
            on_plan=bar.plan,
            on_sample=bar.advance,
        )
    outcome = result.outcome
    eprint(
        f"{result.name}: {outcome.questions} question(s) voted by {len(args.runs)} runs ({outcome.weights}); "
        f"{outcome.abstained} with no answer; {outcome.seconds:.2f} s"
    )
    eprint(f"best single run on these questions: {result.best}; differences below are against it")
    print(render_comparison(result.compared, args.format, resamples=args.resamples))
    return 0
