"""kaoshi vote: combine stored answers of several runs (majority, accuracy-weighted, Dawid-Skene)."""

from __future__ import annotations

import argparse

from kaoshi.analysis.voting import VOTE_METHODS
from kaoshi.cli.common import add_store_option, eprint, open_store
from kaoshi.report import FORMATS, summarize
from kaoshi.report.compare import compare_runs, render_comparison
from kaoshi.runner.vote import vote_runs
from kaoshi.store.pairing import conflict_warning


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
    if args.method != "weighted" and (args.in_sample or args.weights_from):
        raise ValueError("--in-sample and --weights-from are for --method weighted")
    weights_from = [r.strip() for r in args.weights_from.split(",")] if args.weights_from else None
    name = args.run_name or f"vote-{args.method}"
    keys = args.by or ["domain", "type"]
    with open_store(args) as store:
        outcome = vote_runs(store, args.runs, name, args.method, args.in_sample, weights_from)
        loaded = [(store.get_run(run), store.samples(run)) for run in [*args.runs, name]]
    eprint(
        f"{name}: {outcome.questions} question(s) voted by {len(args.runs)} runs ({outcome.weights}); "
        f"{outcome.abstained} with no answer; {outcome.seconds:.2f} s"
    )
    warning = conflict_warning(outcome.conflicts)
    if warning:
        eprint(warning)
    # Members and vote on the questions they all answered: the voted ones, less any a member errored on.
    compared = compare_runs(loaded, lambda run, samples: summarize(run.name, samples, keys))
    members = range(len(args.runs))
    best = max(members, key=lambda i: compared.summaries[i].overall.accuracy or 0.0)
    eprint(f"best single run on these questions: {args.runs[best]}; differences below are against it")
    ordered = compared.reordered([best, *(i for i in members if i != best), len(args.runs)])
    print(render_comparison(ordered, args.format, resamples=args.resamples))
    return 0
