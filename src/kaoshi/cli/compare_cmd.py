"""kaoshi compare: runs on the same questions, each against a baseline, by group, with paired bootstraps."""

from __future__ import annotations

import argparse
import json

from kaoshi.api.studies import COMPARE_KEYS, compare
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.report.paired import paired_table
from kaoshi.report.render import compared_on, coverage_table
from kaoshi.report.tables import TEXT_FORMATS, render_tables


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="runs on the same questions against a baseline run, by domain / type (paired bootstrap)",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="the first is the baseline unless --baseline")
    parser.add_argument("--baseline", help="the run the others are compared with")
    parser.add_argument("--by", action="append", choices=COMPARE_KEYS, help="default: domain and type")
    parser.add_argument("--format", choices=(*TEXT_FORMATS, "json"), default="table")
    parser.add_argument("--resamples", type=int, default=10_000)
    add_store_option(parser)
    parser.set_defaults(handler=compare_command)


def compare_command(args: argparse.Namespace) -> int:
    result = compare(
        args.runs,
        store=existing_store_path(args),
        baseline=args.baseline,
        by=args.by or ["domain", "type"],
        resamples=args.resamples,
        notify=eprint,
    )
    for run, differences in result.differences.items():
        shown = [f"{field} {old!r} → {new!r}" for field, old, new in differences]
        eprint(f"{run} vs {result.runs[0]}: " + ("; ".join(shown) or "same settings"))
    if args.format == "json":
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
        return 0
    headline = compared_on(result.questions, len(result.runs))
    tables = [coverage_table(f"runs — {headline}", result.coverage, result.conflicts)]
    tables += [
        paired_table(
            "overall" if key == "all" else f"by {key}", key if key != "all" else "", result.runs, rows
        )
        for key, rows in result.groups.items()
    ]
    print(render_tables(tables, args.format))
    return 0
