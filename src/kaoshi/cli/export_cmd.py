"""kaoshi export: files other tools take, one kind per benchmark exporter (the C-Eval test submission)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.benchmarks import benchmark_names, get_benchmark
from kaoshi.cli.common import add_store_option, eprint, open_existing_store


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("export", help="export a run for another tool (C-Eval submission)")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for name in benchmark_names():
        for exporter in get_benchmark(name).exporters:
            kind = kinds.add_parser(exporter.name, help=exporter.description)
            kind.add_argument("run", help=f"a run on {name}")
            kind.add_argument("-o", "--output", type=Path, required=True, help="where to write the file")
            add_store_option(kind)
            kind.set_defaults(handler=export_command, exporter=exporter)


def export_command(args: argparse.Namespace) -> int:
    with open_existing_store(args) as store:
        run = store.get_run(args.run)
        lines = args.exporter.write(run, store.iter_samples(args.run), args.output)
    for line in lines:
        eprint(line)
    return 0
