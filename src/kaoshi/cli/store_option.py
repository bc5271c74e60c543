"""The --store option, in a module of its own: `kaoshi --help` adds it without importing the packages
kaoshi.cli.common needs (data, store, models)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_store_option(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """--store works before or after the command; the command's own default does not hide the global one."""
    parser.add_argument(
        "--store",
        type=Path,
        default=None if top_level else argparse.SUPPRESS,
        help="SQLite store (default: $KAOSHI_STORE or ./kaoshi_runs/kaoshi.sqlite)",
    )
