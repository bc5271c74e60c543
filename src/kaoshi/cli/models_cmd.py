"""kaoshi models: the model backends kaoshi can run (its own and installed packages'), what each can do,
and whether what it needs is installed here."""

from __future__ import annotations

import argparse
import json

from kaoshi.api import list_backends
from kaoshi.report.backends import backends_table
from kaoshi.report.tables import render_tables

HELP = "list the model backends (--model NAME[:ARG]), what each can do and whether it is installed"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("models", help=HELP)
    parser.add_argument("--format", choices=("table", "md", "json"), default="table")
    parser.set_defaults(handler=models_command)


def models_command(args: argparse.Namespace) -> int:
    listed = list_backends()
    if args.format == "json":
        print(json.dumps([backend.to_json() for backend in listed], ensure_ascii=False, indent=2))
        return 0
    print(render_tables([backends_table(listed)], args.format))
    return 0
