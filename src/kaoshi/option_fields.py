"""Option dataclasses whose fields say once how they are spelled on the command line.

A field of `kaoshi.RunConfig` or `kaoshi.models.ModelOptions` carries an `Option` in its metadata
(`field(default=..., metadata=cli(help=...))`); `kaoshi run` adds an argument per such field and reads the
parsed arguments back into the dataclass (kaoshi/cli/config_options.py), so an option is written once.
A field marked `nested()` holds another such dataclass, whose options are added in its place."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

T = TypeVar("T")
CLI = "kaoshi.cli"  # the metadata key of a field's Option
NESTED = "kaoshi.nested"  # the metadata key of a field holding another option dataclass

# store: a value (argparse's default); store_true: a flag that sets True; negatable: --X / --no-X, unset
# None; append: the option may be repeated (a list, made the field's value by `collect`).
Action = Literal["store", "store_true", "negatable", "append"]


@dataclass(frozen=True)
class Option:
    """How a field is given on the command line; its default is the field's own.

    help: the help text, or a function making it (when it is computed from a registry); a "{default}" in
        it is filled with `default_help`, else the field's default (or, where a command leaves the option
        unset, what unset means there).
    flag: the option's name (default: --field-name); its argparse dest is the flag's, as usual.
    type: argparse's conversion (int, float, Path), with argparse's own error message.
    parse: a parser of the text whose ValueError message is the error shown.
    collect: turns the parsed value into the field's (the list an append option gathers).
    group: the help section the option is listed under (None: the command's own options)."""

    help: str | Callable[[], str] | None = None
    flag: str | None = None
    type: Callable[[str], Any] | None = None
    parse: Callable[[str], Any] | None = None
    choices: Sequence[str] | None = None
    metavar: str | None = None
    action: Action = "store"
    default_help: str | None = None
    collect: Callable[[Any], Any] | None = None
    group: str | None = None

    def flag_of(self, name: str) -> str:
        return self.flag or "--" + name.replace("_", "-")

    def dest_of(self, name: str) -> str:
        """The attribute the parsed value lands on (argparse's rule: the flag, dashes as underscores)."""
        return self.flag_of(name).removeprefix("--").replace("-", "_")

    def value_from(self, namespace: object, name: str) -> Any:
        """The field's value from parsed arguments (argparse's namespace)."""
        value = getattr(namespace, self.dest_of(name))
        return value if self.collect is None else self.collect(value)

    def help_text(self, default: object, unset: str | None = None) -> str | None:
        text = self.help() if callable(self.help) else self.help
        if text is None or "{default}" not in text:
            return text
        shown = unset if unset is not None else self.default_help
        return text.replace("{default}", str(default) if shown is None else shown)


def cli(
    help: str | Callable[[], str] | None = None,
    *,
    flag: str | None = None,
    type: Callable[[str], Any] | None = None,
    parse: Callable[[str], Any] | None = None,
    choices: Sequence[str] | None = None,
    metavar: str | None = None,
    action: Action = "store",
    default_help: str | None = None,
    collect: Callable[[Any], Any] | None = None,
    group: str | None = None,
) -> Mapping[str, Any]:
    """A field's metadata: its command-line option (see Option)."""
    option = Option(help, flag, type, parse, choices, metavar, action, default_help, collect, group)
    return {CLI: option}


def nested() -> Mapping[str, Any]:
    """A field's metadata: it holds another option dataclass, whose options stand in its place."""
    return {NESTED: True}


def field_default(field: dataclasses.Field[Any]) -> Any:
    """The value a field takes when it is not given."""
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    raise TypeError(f"option field {field.name!r} has no default")


def option_fields(
    cls: type[Any], only: Collection[str] | None = None
) -> Iterator[tuple[dataclasses.Field[Any], Option]]:
    """Every field of `cls` with a command-line option, in field order, nested dataclasses' in place;
    `only`: just these of cls's own fields (a nested field's name takes all of its options)."""
    for field in dataclasses.fields(cls):
        if only is not None and field.name not in only:
            continue
        if field.metadata.get(NESTED):
            yield from option_fields(type(field_default(field)))
        elif CLI in field.metadata:
            yield field, field.metadata[CLI]


def build_config(cls: type[T], value_of: Callable[[dataclasses.Field[Any], Option], Any]) -> T:
    """An instance of `cls` whose option fields (nested dataclasses' too) take `value_of(field, option)`;
    a field without an option keeps its default."""
    values: dict[str, Any] = {}
    dataclass_type: Any = cls  # any dataclass
    for field in dataclasses.fields(dataclass_type):
        if field.metadata.get(NESTED):
            values[field.name] = build_config(type(field_default(field)), value_of)
        elif CLI in field.metadata:
            values[field.name] = value_of(field, field.metadata[CLI])
    return cls(**values)
