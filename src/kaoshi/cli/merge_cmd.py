"""kaoshi merge: the shards of a run (kaoshi run --shard I/N) joined into one run."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api.merging import merge
from kaoshi.cli.common import add_store_option, eprint, store_path
from kaoshi.errors import InputError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("merge", help="join the shards of a run (run --shard I/N) into one run")
    parser.add_argument("sources", nargs="+", type=Path, metavar="SHARD_STORE", help="stores holding shards")
    parser.add_argument(
        "--run-name", help="the merged run's name (default: the shards' name without -shardIofN)"
    )
    add_store_option(parser)
    parser.set_defaults(handler=merge_command)


def merge_command(args: argparse.Namespace) -> int:
    for source in args.sources:
        if not source.is_file():
            raise InputError(f"no store at {source}")
    outcomes = merge(args.sources, store=store_path(args), run_name=args.run_name)
    for outcome in outcomes:
        line = (
            f"{outcome.name}: {len(outcome.shards)} of {outcome.count} shards, {outcome.questions} questions"
        )
        if outcome.missing_shards:
            line += "; missing shard(s) " + ", ".join(f"{i}/{outcome.count}" for i in outcome.missing_shards)
        if outcome.missing:
            line += (
                f"; {outcome.missing} question(s) without an answer (resume their shard, then merge again)"
            )
        if outcome.duplicates:
            shown = ", ".join(outcome.duplicates[:5]) + (" ..." if len(outcome.duplicates) > 5 else "")
            line += f"; {len(outcome.duplicates)} question(s) in two shards, kept once: {shown}"
        eprint(line)
    eprint(f"store {store_path(args)}")
    return 0
