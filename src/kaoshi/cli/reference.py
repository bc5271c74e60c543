"""The documentation site's command-line reference, written from kaoshi's own parser when the site is built
(docs/hooks.py): every command and subcommand with its help, usage and options, so the page cannot
disagree with `kaoshi COMMAND --help`."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass

from kaoshi.cli.main import build_parser
from kaoshi.report.markdown_text import code_span, markdown_cell, markdown_text

REFERENCE_PAGE = "reference/cli.md"
USAGE_WIDTH = 72  # the usage lines wrap here (the page's width), whatever the terminal that builds it
# The options tables sit in a block of this class: the site's stylesheet keeps an option's name on one line.
OPTIONS_CLASS = "kaoshi-options"


@dataclass(frozen=True)
class CommandDoc:
    """One command of the parser: `kaoshi run`, `kaoshi runs rm`."""

    path: tuple[str, ...]  # ("kaoshi", "runs", "rm")
    parser: argparse.ArgumentParser
    help: str  # what its parent's list of commands says of it ("" for kaoshi itself)

    @property
    def name(self) -> str:
        return " ".join(self.path)


def commands(parser: argparse.ArgumentParser | None = None) -> list[CommandDoc]:
    """kaoshi and every command under it, depth first in the order `--help` lists them."""
    root = parser if parser is not None else build_parser()
    return list(_walk(CommandDoc((root.prog,), root, "")))


def _walk(command: CommandDoc) -> Iterator[CommandDoc]:
    yield command
    for action in command.parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: _help_text(command.parser, choice) for choice in action._choices_actions}
        for name, subparser in action.choices.items():
            yield from _walk(CommandDoc((*command.path, name), subparser, helps.get(name, "")))


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The reference page: a section per command with its help, usage and a table of its options."""
    lines = [
        "# Command-line reference",
        "",
        "Every `kaoshi` command, written from kaoshi's own argument parser when this site is built: it says",
        "what `kaoshi COMMAND --help` says. `--store` goes before or after the command, `--debug` before",
        "it.",
        "",
    ]
    found = commands(parser)
    lines += ["| Command | What it does |", "|:---|:---|"]
    lines += [
        f"| [{c.name}](#{_anchor(c)}) | {markdown_cell(c.help)} |" for c in found[1:] if len(c.path) == 2
    ]
    lines.append("")
    for command in found:
        lines += command_section(command)
    return "\n".join(lines)


def command_section(command: CommandDoc) -> list[str]:
    """A command's heading, help, usage and options."""
    level = "##" if len(command.path) <= 2 else "###"  # kaoshi and its commands, then subcommands
    lines = [f"{level} {command.name} {{#{_anchor(command)}}}", ""]
    texts = [command.help, command.parser.description, command.parser.epilog]
    for text in dict.fromkeys(t for t in texts if t):  # a description may repeat the help
        lines += [markdown_text(text), ""]
    lines += ["```text", _usage(command.parser).rstrip(), "```", ""]
    for title, actions in _groups(command.parser):
        lines += [
            f"**{markdown_text(title.capitalize())}**",
            "",
            f'<div class="{OPTIONS_CLASS}" markdown>',
            "",
        ]
        lines += ["| Option | Default | Description |", "|:---|:---|:---|"]
        lines += [_option_row(command.parser, action) for action in actions]
        lines += ["", "</div>", ""]
    return lines


def _anchor(command: CommandDoc) -> str:
    """The heading's id: `kaoshi-run`, `kaoshi-runs-rm`."""
    return "-".join(command.path)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help()


def _groups(parser: argparse.ArgumentParser) -> list[tuple[str, list[argparse.Action]]]:
    """The parser's argument groups as `--help` shows them, without help itself, subcommands (each has
    its own section) and the groups left empty."""
    groups = []
    for group in parser._action_groups:
        shown = [
            action
            for action in group._group_actions
            if action.help != argparse.SUPPRESS
            and not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
        ]
        if shown:
            groups.append((group.title or "options", shown))
    return groups


def _option_row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    invocation = ", ".join(
        " ".join(code_span(word) for word in form) for form in _invocation(formatter, action)
    )
    help_text = markdown_cell(_help_text(parser, action))
    if action.choices is not None and not isinstance(action.choices, dict):
        choices = ", ".join(code_span(str(choice)) for choice in action.choices)
        help_text = f"{help_text} (one of {choices})" if help_text else f"one of {choices}"
    return f"| {invocation} | {_default_text(action)} | {help_text} |"


def _invocation(formatter: argparse.HelpFormatter, action: argparse.Action) -> list[tuple[str, ...]]:
    """Each way to write the argument, as (option, its arguments): (`--model`, `MODEL`), (`--chat`,) and
    (`--no-chat`,), (`RUN [RUN ...]`,). A choice list shows as its destination's name, the choices being
    listed in the description."""
    if action.choices is not None and action.metavar is None:
        action = _with_metavar(action, action.dest.upper() if action.option_strings else action.dest)
    if not action.option_strings:
        return [(formatter._format_args(action, action.dest),)]
    if action.nargs == 0:
        return [(option,) for option in action.option_strings]
    arguments = formatter._format_args(action, action.dest.upper())
    return [(option, arguments) for option in action.option_strings]


def _with_metavar(action: argparse.Action, metavar: str) -> argparse.Action:
    copy = argparse.Action(
        action.option_strings, action.dest, nargs=action.nargs, metavar=metavar, required=action.required
    )
    return copy


def _default_text(action: argparse.Action) -> str:
    """The default where it says something: not for flags, not where there is none."""
    default = action.default
    if action.nargs == 0 or default is None or default == argparse.SUPPRESS:
        return ""
    if isinstance(default, (list, tuple, dict, set, frozenset)) and not default:
        return ""
    return code_span(str(default))


def _help_text(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The action's help with its %(default)s and the like filled in, as `--help` prints it."""
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return argparse.HelpFormatter(parser.prog)._expand_help(action)
