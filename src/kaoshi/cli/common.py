"""Pieces every command shares: the store option, errors mapped to exit codes, output helpers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kaoshi.cli.store_option import add_store_option as add_store_option  # every command takes it here
from kaoshi.data.errors import DataError
from kaoshi.errors import InputError
from kaoshi.models.base import ModelError
from kaoshi.store import Store, StoreError, default_store_path, stores_beside

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


def open_store(args: argparse.Namespace) -> Store:
    return Store(store_path(args))


def existing_store_path(args: argparse.Namespace) -> Path:
    """The store path, StoreError naming the stores beside it when there is none."""
    open_existing_store(args).close()
    return store_path(args)


def open_existing_store(args: argparse.Namespace) -> Store:
    """The store, opened read-only (sqlite's mode=ro): the commands that call this only read it."""
    path = store_path(args)
    if not path.exists():
        others = stores_beside(path)
        if others:
            named = ", ".join(str(p) for p in others)
            raise StoreError(
                f"no store at {path}; found {named} beside it: pass --store {others[0]} (or set KAOSHI_STORE)"
            )
        raise StoreError(f"no store at {path} (run 'kaoshi run' first, or pass --store PATH)")
    return Store(path, read_only=True)


def eprint(message: str) -> None:
    print(message, file=sys.stderr)
