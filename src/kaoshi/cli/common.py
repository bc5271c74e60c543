"""Pieces every command shares: the store option, errors mapped to exit codes, output helpers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.api import DataError, InputError, ModelError, StoreError, default_store_path, require_store_file
from kaoshi.cli.store_option import add_store_option as add_store_option  # every command takes it here

if TYPE_CHECKING:
    from kaoshi.api.ledger import PriceList

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2


# Exceptions that mean the user's input is wrong: exit 2 with the message, no traceback. Anything else
# (a KeyError or ValueError from a bug included) is an internal error: exit 1 (kaoshi.errors).
BAD_INPUT_ERRORS: tuple[type[Exception], ...] = (
    DataError,
    StoreError,
    ModelError,
    InputError,
)


def store_path(args: argparse.Namespace) -> Path:
    """--store, else $KAOSHI_STORE, else ./kaoshi_runs/kaoshi.sqlite."""
    path: Path = args.store or default_store_path()
    return path


def existing_store_path(args: argparse.Namespace) -> Path:
    """The store path; StoreError naming the stores beside it when there is none."""
    return require_store_file(store_path(args))


def eprint(message: str) -> None:
    print(message, file=sys.stderr)


def price_option(text: str) -> PriceList:
    """`--price IN,OUT[,CACHED]` or a prices file, for argparse: an error says what to write."""
    # Late import: only --price reads prices (a report without it imports less)
    from kaoshi.api.ledger import parse_prices

    try:
        return parse_prices(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--price {text!r}: ")) from None
