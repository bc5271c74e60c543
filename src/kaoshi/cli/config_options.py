"""Command-line options generated from an option dataclass (kaoshi.RunConfig, kaoshi.models.ModelOptions):
an argument per field with an `Option` in its metadata, and the parsed arguments read back into the
dataclass. An option is written once, in its field (kaoshi/option_fields.py)."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any, TypeVar

from kaoshi.api.vocabulary import CLI, Option, build_config, field_default, option_fields

T = TypeVar("T")


def add_config_options(
    parser: argparse.ArgumentParser,
    config: type[Any],
    *,
    only: Collection[str] | None = None,
    unset: str | None = None,
) -> None:
    """An argument per option field of `config`, in field order (a nested dataclass's in its place, under
    their help sections). only: just these fields (a nested dataclass's too, by name). unset: what an
    option left out means to this command (e.g. "the source run's"): its default is then None, and the
    help says so."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for field, option in _chosen(config, only):
        target: argparse._ActionsContainer = parser
        if option.group is not None:
            if option.group not in groups:
                groups[option.group] = parser.add_argument_group(option.group)
            target = groups[option.group]
        _add_option(target, field.name, option, field_default(field), unset)


def add_field_option(
    parser: argparse.ArgumentParser, name: str, metadata: Mapping[str, Any], default: object
) -> None:
    """The argument add_config_options adds for the option field `name` of a config, given its metadata
    (kaoshi.option_fields.cli) and default: for a command taking one option of a config whose module it
    does not import (`kaoshi report --standard-score`, RunConfig's)."""
    _add_option(parser, name, metadata[CLI], default, None)


def _add_option(
    target: argparse._ActionsContainer, name: str, option: Option, default: object, unset: str | None
) -> None:
    target.add_argument(
        option.flag_of(name),
        **_argument(option, None if unset is not None else default),
        help=option.help_text(default, unset),
    )


def _argument(option: Option, default: object) -> dict[str, Any]:
    """add_argument's keywords but the flag and help."""
    if option.action == "store_true":
        return {"action": "store_true", "default": default}
    if option.action == "negatable":
        return {"action": argparse.BooleanOptionalAction, "default": default}
    kwargs: dict[str, Any] = {"default": default}
    if option.action == "append":
        kwargs["action"] = "append"
    if option.type is not None:
        kwargs["type"] = option.type
    elif option.parse is not None:
        kwargs["type"] = _shown_errors(option.parse)
    if option.choices is not None:
        kwargs["choices"] = option.choices
    if option.metavar is not None:
        kwargs["metavar"] = option.metavar
    return kwargs


def _shown_errors(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` with its ValueError's message as argparse's error for the option."""

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def read_config(config: type[T], args: argparse.Namespace) -> T:
    """`config` from the parsed arguments of the options add_config_options added for it."""
    return build_config(config, lambda field, option: option.value_from(args, field.name))


def config_values(
    config: type[Any], args: argparse.Namespace, *, only: Collection[str] | None = None
) -> dict[str, Any]:
    """The values of `config`'s options (nested ones too; `only` these) by field name, as keyword
    arguments."""
    return {field.name: option.value_from(args, field.name) for field, option in _chosen(config, only)}


def _chosen(
    config: type[Any], only: Collection[str] | None
) -> Iterator[tuple[dataclasses.Field[Any], Option]]:
    """`config`'s option fields, nested ones in their place; `only` those of these names."""
    return (item for item in option_fields(config) if only is None or item[0].name in only)
