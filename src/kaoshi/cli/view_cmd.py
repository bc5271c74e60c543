"""kaoshi view: every run and every answer of the store in the browser, live while runs write."""

from __future__ import annotations

import argparse

from kaoshi.cli.common import add_store_option, existing_store_path, price_option
from kaoshi.view import DEFAULT_HOST, DEFAULT_PORT, serve


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "view", help="browse runs, answers, comparisons and leaderboards in the browser (live, read-only)"
    )
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"address to serve on (default {DEFAULT_HOST}: this machine only)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free one)"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="serve on an address other machines can reach (anyone who reaches it reads the whole store)",
    )
    parser.add_argument(
        "--price",
        type=price_option,
        metavar="IN,OUT[,CACHED]|FILE",
        help="prices per million prompt, completion and cached prompt tokens, or a prices file (JSON: "
        'model -> "IN,OUT[,CACHED]"): each run page shows what its model, judges and extractor cost',
    )
    add_store_option(parser)
    parser.set_defaults(handler=view_command)


def view_command(args: argparse.Namespace) -> int:
    serve(
        existing_store_path(args),
        host=args.host,
        port=args.port,
        allow_remote=args.allow_remote,
        prices=args.price,
    )
    return 0
