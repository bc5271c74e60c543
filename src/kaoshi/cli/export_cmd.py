"""kaoshi export: files other tools take, one kind per benchmark exporter (the C-Eval test submission)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api import export_run
from kaoshi.benchmarks import benchmark_names, get_benchmark
from kaoshi.cli.common import add_store_option, eprint, existing_store_path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("export", help="export a run for another tool (C-Eval submission)")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for name in benchmark_names():
        for exporter in get_benchmark(name).exporters:
            kind = kinds.add_parser(exporter.name, help=exporter.description)
            kind.add_argument("run", help=f"a run on {name}")
            kind.add_argument("-o", "--output", type=Path, required=True, help="where to write the file")
            add_store_option(kind)
            kind.set_defaults(handler=export_command, exporter=exporter.name)


def export_command(args: argparse.Namespace) -> int:
    for line in export_run(args.run, args.exporter, args.output, store=existing_store_path(args)):
        eprint(line)
    return 0
