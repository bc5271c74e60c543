"""The kaoshi command line. Exit codes: 0 success, 2 bad input, 1 other failures."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NamedTuple

from kaoshi.cli.store_option import add_store_option
from kaoshi.version import __version__


class Command(NamedTuple):
    module: str  # in kaoshi.cli; its register(subparsers) adds the command
    help: str  # the help the module registers (a test keeps them equal)


# The commands in the order `kaoshi --help` lists them. Only the module of the command being run is
# imported (they import rich, numpy, the report and model code); the others are listed by name and help.
COMMANDS: dict[str, Command] = {
    "run": Command("run_cmd", "evaluate a model on an exam (resumes a run of the same name)"),
    "runs": Command("inspect_cmds", "list the runs in the store; runs rm / runs mv remove or rename runs"),
    "report": Command(
        "inspect_cmds",
        "accuracy overall and by domain / type / subject / category / group; several runs side by side",
    ),
    "samples": Command("inspect_cmds", "the stored samples of a run"),
    "benchmarks": Command("benchmarks_cmd", "list the benchmarks kaoshi can load"),
    "models": Command(
        "models_cmd",
        "list the model backends (--model NAME[:ARG]), what each can do and whether it is installed",
    ),
    "validate": Command("validate_cmd", "check an exam file (kaoshi JSONL, QualBench, C-Eval folder)"),
    "prompt": Command("prompt_cmd", "show the prompt a question is sent with"),
    "rescore": Command("rescore_cmd", "re-score stored responses into a new run (no model calls)"),
    "leaderboard": Command("leaderboard_cmd", "all runs on a benchmark, ranked (C-Eval layout for C-Eval)"),
    "export": Command("export_cmd", "export a run for another tool (C-Eval submission)"),
    "plot": Command("plot_cmd", "bar chart with 95%% intervals, or radar profile, of runs"),
    "html": Command("html_cmd", "a self-contained HTML report of one or more runs"),
    "judge": Command("judge_cmd", "grade the open answers of a run with an LLM judge"),
    "agreement": Command("agreement_cmd", "agreement of BLEU, ROUGE and LLM judges with human scores"),
    "exam": Command("exam_cmd", "transform exam files (shuffle options)"),
    "contamination": Command(
        "contamination_cmd", "original vs shuffled-options run: accuracy drop, McNemar's exact test"
    ),
    "vote": Command(
        "vote_cmd", "combine several runs' answers per question into a new run, compared with its members"
    ),
    "compare": Command(
        "compare_cmd",
        "runs on the same questions against a baseline run, by domain / type (paired bootstrap)",
    ),
    "merge": Command("merge_cmd", "join the shards of a run (run --shard I/N) into one run"),
    "split": Command("split_cmd", "split an exam into train and test parts (for finetune)"),
    "finetune": Command("finetune_cmd", "LoRA fine-tuning on a training split (kaoshi split)"),
    "store": Command(
        "store_cmd",
        "keep the store safe to copy and small: checkpoint its -wal, back it up while runs write, check it, "
        "compact it",
    ),
    "view": Command(
        "view_cmd", "browse runs, answers, comparisons and leaderboards in the browser (live, read-only)"
    ),
}

# Global options that take a value: the word after them is not the command.
_VALUE_OPTIONS = ("--store",)


def selected_command(argv: Sequence[str]) -> str | None:
    """The command argv runs: its first positional word, if that is a command's name."""
    words = iter(argv)
    for word in words:
        if word == "--":
            word = next(words, "")
        elif word.startswith("-"):
            # argparse also accepts an unambiguous prefix (--sto PATH) and --store=PATH
            if len(word) > 2 and "=" not in word and any(o.startswith(word) for o in _VALUE_OPTIONS):
                next(words, None)
            continue
        return word if word in COMMANDS else None
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for argv: the command argv names is registered in full and every other command only
    by name and help, so that their modules are not imported; where argv names a command and asks for no
    help, the others are left out (only the top-level help lists them: a parser each was 2% of a report of
    a stored run). argv None registers every command."""
    parser = argparse.ArgumentParser(
        prog="kaoshi", description="Measure how well large language models pass Chinese exams."
    )
    parser.add_argument("--version", action="version", version=f"kaoshi {__version__}")
    add_store_option(parser, top_level=True)
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an internal error (to report it)"
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    listed = True  # every command named in the top-level help
    if argv is None:
        modules = {command.module for command in COMMANDS.values()}
    else:
        chosen = selected_command(argv)
        modules = {COMMANDS[chosen].module} if chosen else set()
        listed = chosen is None or asks_for_help(argv)
    for name, command in COMMANDS.items():
        if name in subparsers.choices:
            continue  # added by an earlier command's module
        if command.module in modules:
            importlib.import_module(f"kaoshi.cli.{command.module}").register(subparsers)
        elif listed:
            subparsers.add_parser(name, help=command.help)
    return parser


def asks_for_help(argv: Sequence[str]) -> bool:
    """Whether argv holds -h or --help (or an abbreviation argparse takes, --he): maybe the top-level
    help, which lists every command."""
    return any(word == "-h" or (word.startswith("--h") and "--help".startswith(word)) for word in argv)


def quiet_library_progress_bars() -> None:
    """Off a terminal (a log, `make demo` piped, CI), the Hugging Face libraries' progress bars write
    every step as a line of their own: leave them out there (set before transformers is imported)."""
    if not sys.stderr.isatty():
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command `argv` names and give its exit code. argv None: the process's own command line (the
    `kaoshi` executable), the process ending with the command."""
    quiet_library_progress_bars()
    arguments = sys.argv[1:] if argv is None else argv
    # The command's modules are imported as its parser is built and live as long as the process: collected
    # as they were made, walked again by every later collection and once more as the process ends, they
    # cost a report of a stored run a tenth of its time. They are made with the collector paused, and in
    # the `kaoshi` executable, which ends with the command, left out of its collections (gc.freeze; a
    # process that calls main goes on, and may have frozen objects of its own).
    collecting = gc.isenabled()
    gc.disable()
    try:
        parser = build_parser(arguments)
    finally:
        if collecting:
            gc.enable()
    if argv is None:
        gc.freeze()
    return _run(parser.parse_args(arguments))


def _run(args: argparse.Namespace) -> int:
    """The command's handler, its errors mapped to exit codes."""
    # here, not at the top: it imports the data, store and model packages (most of `kaoshi --help`'s
    # time); the command's module has imported it already.
    # Late import: `kaoshi --help` stays fast.
    from kaoshi.cli.common import BAD_INPUT_ERRORS, EXIT_BAD_INPUT, EXIT_FAILURE, eprint

    try:
        code: int = args.handler(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler's try
        return code
    except BAD_INPUT_ERRORS as exc:
        eprint(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        eprint("interrupted")
        return 130
    except BrokenPipeError:
        # The reader went away (`kaoshi samples RUN | head`): end quietly, as Unix tools do. Python would
        # flush stdout again at exit and fail once more, so it is pointed at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        eprint(
            f"internal error, please report it: {type(exc).__name__}: {exc}"
            + ("" if args.debug else " (run with --debug for the traceback)")
        )
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
