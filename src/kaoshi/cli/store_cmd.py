"""kaoshi store: checkpoint, back up, check and compact the store file."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api.store_tools import backup_store, check_store, checkpoint_store, compact_store
from kaoshi.cli.common import EXIT_BAD_INPUT, add_store_option, eprint, store_path

HELP = (
    "keep the store safe to copy and small: checkpoint its -wal, back it up while runs write, check it, "
    "compact it"
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "store",
        help=HELP,
        description="A store is in WAL mode: until a checkpoint, recent answers live in its -wal file. "
        "Copy it with 'kaoshi store backup', or run 'kaoshi store checkpoint' before copying the file.",
    )
    add_store_option(parser)
    actions = parser.add_subparsers(dest="store_action", required=True, metavar="ACTION")
    checkpoint = actions.add_parser(
        "checkpoint", help="fold the -wal into the store file, so that the file alone holds every answer"
    )
    add_store_option(checkpoint)
    checkpoint.set_defaults(handler=checkpoint_command)
    backup = actions.add_parser(
        "backup", help="a consistent one-file copy of the store (SQLite online backup), safe while runs write"
    )
    backup.add_argument("out", type=Path, metavar="OUT", help="the copy to write (must not exist)")
    add_store_option(backup)
    backup.set_defaults(handler=backup_command)
    check = actions.add_parser(
        "check", help="integrity check, schema version, run and sample counts (exit 2 when not ok)"
    )
    add_store_option(check)
    check.set_defaults(handler=check_command)
    compact = actions.add_parser(
        "compact",
        help="hold each prompt and question once where older samples hold them in their rows, delete the "
        "texts of runs removed, and give the space freed back (VACUUM)",
    )
    add_store_option(compact)
    compact.set_defaults(handler=compact_command)


def checkpoint_command(args: argparse.Namespace) -> int:
    result = checkpoint_store(store_path(args))
    folded = f"{_size(result.wal_bytes)} of -wal folded in" if result.wal_bytes else "the -wal was empty"
    print(f"checkpointed {result.path} ({folded}): the file alone now holds every committed answer")
    return 0


def backup_command(args: argparse.Namespace) -> int:
    result = backup_store(args.out, store=store_path(args))
    print(
        f"backed up {result.source} to {result.out}: {result.runs} run(s), {result.samples} sample(s), "
        f"{_size(result.size_bytes)}"
    )
    return 0


def compact_command(args: argparse.Namespace) -> int:
    result = compact_store(store_path(args))
    moved = (
        f"{result.moved} sample(s) of {len(result.runs)} run(s) now hold their prompt and question once"
        if result.moved
        else "every sample already held its prompt and question once"
    )
    dropped = f"; {result.dropped} text(s) no sample held were deleted" if result.dropped else ""
    sizes = f"{_size(result.bytes_before)} -> {_size(result.bytes_after)} on disk"
    print(f"compacted {result.path}: {moved}{dropped}; {sizes}")
    return 0


def check_command(args: argparse.Namespace) -> int:
    result = check_store(store_path(args))
    if not result.ok:
        eprint(f"error: {result.path} is not ok:")
        for problem in result.problems:
            eprint(f"  {problem}")
        if result.advice:
            eprint(f"  {result.advice}")
        return EXIT_BAD_INPUT
    print(f"{result.path}: ok")
    print(
        f"  schema version {result.schema_version}; {result.runs} run(s), {result.samples} sample(s), "
        f"{result.grades} grade(s)"
    )
    if result.wal_bytes:
        print(
            f"  {_size(result.wal_bytes)} in {result.path}-wal: copy it with the file, or run "
            "'kaoshi store checkpoint' (or 'kaoshi store backup OUT') first"
        )
    if result.held_in_rows:
        print(
            f"  {result.held_in_rows} sample(s) hold their prompt and question in their own row (written "
            "before schema 2): 'kaoshi store compact' holds each text once and gives the space back"
        )
    return 0


def _size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} B"
    size = n_bytes / 1024
    for unit in ("KB", "MB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"
