"""`kaoshi --help` and `kaoshi CMD ...` import only the command they run: the command table in
kaoshi.cli.main stays equal to what the command modules register."""

from __future__ import annotations

import argparse
import importlib
import json

import pytest

from kaoshi.cli.main import COMMANDS, build_parser, main, selected_command
from tests.support.fresh import run_fresh

MODULES = sorted({command.module for command in COMMANDS.values()})


def registered(parser: argparse.ArgumentParser) -> list[tuple[str, str | None]]:
    """(name, help) of each command of parser, in the order --help lists them."""
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [(action.dest, action.help) for action in subparsers._choices_actions]


@pytest.mark.parametrize("module", MODULES)
def test_table_matches_what_the_module_registers(module: str) -> None:
    parser = argparse.ArgumentParser()
    register = importlib.import_module(f"kaoshi.cli.{module}").register
    register(parser.add_subparsers())
    table = [(name, command.help) for name, command in COMMANDS.items() if command.module == module]
    assert registered(parser) == table


def test_full_parser_lists_the_table_in_order() -> None:
    assert registered(build_parser()) == [(name, command.help) for name, command in COMMANDS.items()]


def test_top_level_help_is_the_same_without_importing_commands() -> None:
    assert build_parser(["--help"]).format_help() == build_parser().format_help()


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        ([], None),
        (["--help"], None),
        (["--version"], None),
        (["run", "--model", "smollm2"], "run"),
        (["--store", "run", "report", "r1"], "report"),  # a store file named like a command
        (["--store=run", "samples", "r1"], "samples"),
        (["--sto", "vote", "runs"], "runs"),  # argparse's abbreviation of --store
        (["-h", "vote"], "vote"),
        (["--", "split"], "split"),
        (["nonsense", "run"], None),  # argparse rejects the first word; nothing to import
        (["export", "ceval-submission", "r1"], "export"),
    ],
)
def test_selected_command(argv: list[str], command: str | None) -> None:
    assert selected_command(argv) == command


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_parses(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`kaoshi CMD --help` exits 0 and prints the help of the fully built parser."""
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert capsys.readouterr().out == subparsers.choices[command].format_help()


COMMAND_MODULES = {f"kaoshi.cli.{module}" for module in MODULES}
HEAVY = (
    "rich",
    "numpy",
    "scipy",
    "torch",
    "transformers",
    "kaoshi.report",
    "kaoshi.runner",
    "kaoshi.prompts",
)


def loaded_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after `kaoshi ARGV` has parsed its arguments."""
    code = (
        "import json, sys\n"
        "from kaoshi.cli.main import main\n"
        f"try:\n    main({list(argv)!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    )
    result = run_fresh(code, timeout=60)
    modules: list[str] = json.loads(result.stderr.strip().splitlines()[-1])
    return set(modules)


def test_help_imports_no_command_and_nothing_heavy() -> None:
    loaded = loaded_after("--help")
    assert not loaded & COMMAND_MODULES
    assert not {m for m in loaded if any(m == h or m.startswith(f"{h}.") for h in HEAVY)}


def test_a_command_imports_only_its_own_module() -> None:
    assert loaded_after("--store", "x.sqlite", "vote", "--help") & COMMAND_MODULES == {"kaoshi.cli.vote_cmd"}
