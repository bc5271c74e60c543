"""kaoshi leaderboard: every run in the store on a benchmark, ranked."""

from __future__ import annotations

import argparse
import json

from kaoshi.api.boards import leaderboard
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.report.leaderboard import leaderboard_table
from kaoshi.report.tables import TEXT_FORMATS, render_tables


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "leaderboard", help="all runs on a benchmark, ranked (C-Eval layout for C-Eval)"
    )
    parser.add_argument("--benchmark", help="only this benchmark (default: one table per benchmark)")
    parser.add_argument("--split", help="only runs on this split")
    parser.add_argument("--format", choices=(*TEXT_FORMATS, "json"), default="table")
    add_store_option(parser)
    parser.set_defaults(handler=leaderboard_command)


def leaderboard_command(args: argparse.Namespace) -> int:
    boards = leaderboard(store=existing_store_path(args), benchmark=args.benchmark, split=args.split)
    for board in boards:
        warning = board.compared.pairing.warning()
        if warning:
            eprint(f"{board.benchmark}: {warning}")
    tables = [leaderboard_table(board) for board in boards]
    if args.format == "json":
        document = [board.to_json(table) for board, table in zip(boards, tables, strict=True)]
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        print(render_tables(tables, args.format))
    return 0
