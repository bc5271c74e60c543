"""kaoshi html: one self-contained HTML file with tables, plots and a per-question browser."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api.html_report import write_html_report
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.report import GROUP_KEYS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("html", help="a self-contained HTML report of one or more runs")
    parser.add_argument("runs", nargs="+", metavar="RUN")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the .html file to write")
    parser.add_argument(
        "--by",
        choices=tuple(GROUP_KEYS),
        help="grouping of the plots (default: domain, else category, else subject, else type)",
    )
    parser.add_argument("--title", default="kaoshi report")
    parser.add_argument("--no-prompts", action="store_true", help="leave the prompts out (smaller file)")
    parser.add_argument(
        "--grader", help="whose grades of open answers count (default: each run's most recent judge setup)"
    )
    parser.add_argument(
        "--human",
        type=Path,
        help="CSV of human scores (question_id, scorer, score) of the first run's open answers: adds the "
        "agreement of every grader with them",
    )
    add_store_option(parser)
    parser.set_defaults(handler=html_command)


def html_command(args: argparse.Namespace) -> int:
    written = write_html_report(
        args.runs,
        args.output,
        store=existing_store_path(args),
        grader=args.grader,
        by=args.by,
        title=args.title,
        with_prompts=not args.no_prompts,
        human=args.human,
        store_label=str(args.store or ""),
    )
    for note in written.notes:
        eprint(f"note: {note}")
    size = "" if written.size is None else f"{written.size / 1024:.0f} KiB, "
    eprint(f"wrote {written.path} ({size}{written.plots} plot(s))")
    return 0
