"""kaoshi runs rm / mv: remove runs (after a confirmation) or rename one; `kaoshi runs` alone lists them
(kaoshi.cli.inspect_cmds)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.errors import InputError

# The store's upkeep is imported by the actions alone: `kaoshi runs` and `kaoshi report`, whose module adds
# these actions to its parser, never use it.
if TYPE_CHECKING:
    from kaoshi.api.store_tools import RemovedRun


def add_run_actions(runs: argparse.ArgumentParser) -> None:
    """`rm` and `mv` under `kaoshi runs`, which without an action still lists the runs."""
    actions = runs.add_subparsers(dest="runs_action", required=False, metavar="[ACTION]")
    rm = actions.add_parser(
        "rm",
        help="remove runs with their samples and grades (asks first, unless --yes)",
        description="Remove runs with their samples, grades and leases, in one transaction. A run that "
        "another live process is running or holds is refused; no other run is touched.",
    )
    rm.add_argument("names", nargs="+", metavar="NAME", help="the runs to remove")
    rm.add_argument("-y", "--yes", action="store_true", help="remove without asking")
    add_store_option(rm)
    rm.set_defaults(handler=rm_command)
    mv = actions.add_parser(
        "mv",
        help="rename a run (its samples and grades move with it)",
        description="Rename a run in every table that names it, in one transaction. Refused when NEW "
        "exists or a live process holds the run.",
    )
    mv.add_argument("old", metavar="OLD", help="the run to rename")
    mv.add_argument("new", metavar="NEW", help="its new name (must not exist)")
    add_store_option(mv)
    mv.set_defaults(handler=mv_command)


def rm_command(args: argparse.Namespace) -> int:
    # Late import: only `runs rm` and `runs mv` change the store (`kaoshi runs` imports less)
    from kaoshi.api.store_tools import remove_runs

    store = existing_store_path(args)
    planned = remove_runs(args.names, store=store, dry_run=True)  # unknown or live runs refused before asking
    if args.yes:
        chosen = [run.name for run in planned]
    elif not sys.stdin.isatty():
        raise InputError(
            "kaoshi runs rm: not asking without a terminal on stdin, and nothing was removed; pass --yes "
            "to remove " + ", ".join(repr(run.name) for run in planned) + " without asking"
        )
    else:
        chosen = [run.name for run in planned if _confirmed(f"remove run {run.name!r} ({_contents(run)})?")]
    if not chosen:
        eprint("nothing removed")
        return 0
    for run in remove_runs(chosen, store=store):
        print(f"removed run {run.name!r} ({_contents(run)})")
    return 0


def mv_command(args: argparse.Namespace) -> int:
    # Late import: only `runs rm` and `runs mv` change the store (`kaoshi runs` imports less)
    from kaoshi.api.store_tools import rename_run

    moved = rename_run(args.old, args.new, store=existing_store_path(args))
    print(
        f"renamed run {moved.old!r} to {moved.new!r} ({_counted(moved.samples, 'sample')}, "
        f"{_counted(moved.grades, 'grade')} moved)"
    )
    return 0


def _confirmed(question: str) -> bool:
    """Ask on stderr (stdout stays the command's output); only y / yes removes, end of input is no."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def _contents(run: RemovedRun) -> str:
    return f"{_counted(run.samples, 'sample')}, {_counted(run.grades, 'grade')}"


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
