"""kaoshi plot: a figure of one or more runs, by a grouping."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api.summary import summarize
from kaoshi.benchmarks import english_names
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.report import GROUP_KEYS
from kaoshi.report.plot import PLOT_KINDS, draw, natural_grouping, save_figure


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("plot", help="bar chart with 95%% intervals, or radar profile, of runs")
    parser.add_argument("runs", nargs="+", metavar="RUN")
    parser.add_argument(
        "--by",
        choices=tuple(GROUP_KEYS),
        help="grouping (default: domain, else category, else subject, else type: the first the runs carry)",
    )
    parser.add_argument("--kind", choices=PLOT_KINDS, default="bar")
    parser.add_argument("-o", "--output", type=Path, required=True, help="image file: .png, .svg or .pdf")
    add_store_option(parser)
    parser.set_defaults(handler=plot_command)


def plot_command(args: argparse.Namespace) -> int:
    store = existing_store_path(args)
    # with the judge's grades and the standard scores, as `kaoshi report` shows them
    summaries = [summarize(name, store=store, by=[args.by] if args.by else None) for name in args.runs]
    figure = draw(summaries, args.by or natural_grouping(summaries), args.kind, english_names())
    save_figure(figure, args.output)
    eprint(f"wrote {args.output}")
    return 0
