"""The kaoshi command line. Exit codes: 0 success, 2 bad input, 1 other failures."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import kaoshi
from kaoshi.cli import (
    agreement_cmd,
    compare_cmd,
    contamination_cmd,
    exam_cmd,
    export_cmd,
    finetune_cmd,
    html_cmd,
    inspect_cmds,
    judge_cmd,
    leaderboard_cmd,
    plot_cmd,
    prompt_cmd,
    rescore_cmd,
    run_cmd,
    split_cmd,
    validate_cmd,
    vote_cmd,
)
from kaoshi.cli.common import (
    BAD_INPUT_ERRORS,
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    add_store_option,
    eprint,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kaoshi", description="Measure how well large language models pass Chinese exams."
    )
    parser.add_argument("--version", action="version", version=f"kaoshi {kaoshi.__version__}")
    add_store_option(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run_cmd.register(subparsers)
    inspect_cmds.register(subparsers)
    validate_cmd.register(subparsers)
    prompt_cmd.register(subparsers)
    rescore_cmd.register(subparsers)
    leaderboard_cmd.register(subparsers)
    export_cmd.register(subparsers)
    plot_cmd.register(subparsers)
    html_cmd.register(subparsers)
    judge_cmd.register(subparsers)
    agreement_cmd.register(subparsers)
    exam_cmd.register(subparsers)
    contamination_cmd.register(subparsers)
    vote_cmd.register(subparsers)
    compare_cmd.register(subparsers)
    split_cmd.register(subparsers)
    finetune_cmd.register(subparsers)
    return parser


def quiet_library_progress_bars() -> None:
    """Off a terminal (a log, `make demo` piped, CI), the Hugging Face libraries' progress bars write
    every step as a line of their own: leave them out there (set before transformers is imported)."""
    if not sys.stderr.isatty():
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def main(argv: Sequence[str] | None = None) -> int:
    quiet_library_progress_bars()
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
        return code
    except BAD_INPUT_ERRORS as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        eprint(f"error: {message}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        eprint("interrupted")
        return 130
    except Exception as exc:
        eprint(f"error: {type(exc).__name__}: {exc}")
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
