"""kaoshi leaderboard: every run in the store on a benchmark, ranked."""

from __future__ import annotations

import argparse
import json

from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.report.leaderboard import build_board, leaderboard_table
from kaoshi.report.tables import TEXT_FORMATS, render_tables
from kaoshi.runner.judge import load_graded
from kaoshi.store.records import RunRecord, SampleRecord


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
    by_benchmark: dict[str, list[tuple[RunRecord, list[SampleRecord], str | None]]] = {}
    with open_existing_store(args) as store:
        for run in store.runs():
            spec = run.spec
            if args.benchmark not in (None, spec.benchmark) or args.split not in (None, spec.split):
                continue
            loaded = load_graded(store, run.name)
            by_benchmark.setdefault(spec.benchmark, []).append((run, loaded.samples, loaded.grader))
    if not by_benchmark:
        wanted = f" on benchmark {args.benchmark!r}" if args.benchmark else ""
        raise ValueError(f"no runs{wanted} in the store")
    boards = [build_board(name, by_benchmark[name]) for name in sorted(by_benchmark)]
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
