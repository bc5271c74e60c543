"""The sandbox user templates render in: Jinja's immutable sandbox (values only: no dunder names, no
mutating the values it is given), with every render bounded in steps, time and memory.

Jinja's sandbox guards what a template may reach, not what it may cost: `'x'|center(10**9)` allocated a GB
and three nested `range(100000)` loops never ended. Here each operation that builds text (`~`, `+`, `*`,
`%`, `**`, str.format, the filters and string methods that can multiply their input) is estimated and
refused before it allocates past MAX_PROMPT_CHARS, and everything a render does is charged to its budget
(jinja_budget: steps, work, seconds)."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from types import BuiltinMethodType
from typing import Any

from jinja2 import StrictUndefined, nodes
from jinja2.environment import Template
from jinja2.runtime import Context, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from markupsafe import EscapeFormatter, Markup

from kaoshi.data.limits import MAX_PROMPT_CHARS, MAX_TEMPLATE_INT_DIGITS
from kaoshi.prompts.jinja_budget import (
    BUDGET_KEY,
    HOOKS,
    RenderBudget,
    TemplateLimitError,
    TemplateLimits,
    budget_of,
    instrument,
    too_large,
)
from kaoshi.prompts.jinja_costs import (
    int_digits,
    percent_size,
    power_digits,
    replace_size,
    spec_size,
    text_size,
    translate_size,
)
from kaoshi.prompts.jinja_filters import bounded_filters, bounded_json_dumps, bounded_test, joined_items

__all__ = ["BUDGET_KEY", "BoundedSandbox", "RenderBudget", "TemplateLimitError", "TemplateLimits"]

REFUSED_GLOBALS = frozenset({"lipsum"})  # lipsum(10**9) writes 10^9 paragraphs
_LIMIT = MAX_PROMPT_CHARS


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox, each render bounded by the budget in its context (BUDGET_KEY)."""

    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self) -> None:
        super().__init__(undefined=StrictUndefined, keep_trailing_newline=False, autoescape=False)
        for name in REFUSED_GLOBALS:
            del self.globals[name]
        self.filters = {**bounded_filters(self.filters), **HOOKS}
        self.tests = {name: bounded_test(function) for name, function in self.tests.items()}
        self.policies["json.dumps_function"] = bounded_json_dumps

    def compile_bounded(self, tree: nodes.Template) -> Template:
        """The parsed template, instrumented so that each render is charged to its budget."""
        return self.from_string(instrument(tree).set_environment(self))  # type: ignore[arg-type]

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        size = binop_size(operator, left, right)
        if size > _LIMIT:
            count = right if isinstance(right, int) else left
            shown = f"* {count:,}" if operator == "*" and isinstance(count, int) else operator
            raise too_large(f"'{shown}' would build {size:,} characters or items")
        budget_of(context).charge(size)
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = budget_of(__context)
        budget.tick()
        if isinstance(__obj, LoopContext) and args:  # a recursive loop entering its next level
            args = (budget.ticking(args[0]), *args[1:])
        if isinstance(__obj, Macro):
            return super().call(__context, __obj, *args, **kwargs)  # its outputs are charged as written
        given = {k: v for k, v in kwargs.items() if not k.startswith("_")}  # not Jinja's _loop_vars
        if isinstance(__obj, BuiltinMethodType) and isinstance(__obj.__self__, (str, bytes, int)):
            args = check_method(__obj, args, given, budget)
        elif isinstance(__obj, BuiltinMethodType) and __obj.__name__ in ("count", "index"):
            budget.charge_read(__obj.__self__)  # compares each item
        for argument in (*args, *given.values()):
            budget.charge_read(argument)  # compared, hashed or copied: dict.get(key), loop.changed(value)
        return budget.charge_result(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        if super().wrap_str_format(value) is None:
            return None
        text: str = value.__self__
        formatter = (
            _BoundedEscapeFormatter(self, escape=text.escape)
            if isinstance(text, Markup)
            else _BoundedFormatter(self)
        )
        is_format_map = value.__name__ == "format_map"

        def bounded_format(*args: Any, **kwargs: Any) -> str:
            if not is_format_map:
                return type(text)(formatter.vformat(text, args, kwargs))
            if kwargs or len(args) != 1:
                raise TypeError("format_map() takes exactly one argument, and no keywords")
            return type(text)(formatter.vformat(text, (), args[0]))

        return update_wrapper(bounded_format, value)


def binop_size(operator: str, left: Any, right: Any) -> int:
    """What `left operator right` builds (characters or items); TemplateLimitError for a huge number."""
    if operator == "*":
        for sequence, count in ((left, right), (right, left)):
            if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int):
                return len(sequence) * max(count, 0)
        if isinstance(left, int) and isinstance(right, int):
            _check_digits(int_digits(left) + int_digits(right), "*")
    elif operator == "**" and isinstance(left, int) and isinstance(right, int):
        _check_digits(power_digits(left, right), f"{str(left)[:20]} ** {right}")
    elif operator == "+" and isinstance(left, (str, bytes, list, tuple)) and isinstance(right, type(left)):
        return len(left) + len(right)
    elif operator == "%" and isinstance(left, str):
        return percent_size(left, right, _LIMIT)
    return 0


def _check_digits(digits: int, what: str) -> None:
    if digits > MAX_TEMPLATE_INT_DIGITS:
        raise too_large(f"'{what}' is too large a number (more than {MAX_TEMPLATE_INT_DIGITS:,} digits)")


def check_method(
    method: Any, args: tuple[Any, ...], kwargs: dict[str, Any], budget: RenderBudget
) -> tuple[Any, ...]:
    """Refuse a str, bytes or int method that would build more than a prompt holds; the arguments to call
    it with (join's items read once, each a step)."""
    receiver, name = method.__self__, method.__name__
    if name == "join" and args and isinstance(receiver, (str, bytes)):
        return (joined_items(args[0], receiver, budget, ".join()"), *args[1:])
    estimate = _METHOD_SIZES.get(name)
    if estimate is None:
        return args
    try:
        size = estimate(receiver, *args, **kwargs)
    except (TypeError, ValueError):
        return args  # wrong arguments: the call itself says so
    if size > _LIMIT:
        raise too_large(f".{name}() would build {size:,} characters")
    budget.charge(size)
    return args


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _text_method(function: Callable[..., int]) -> Callable[..., int]:
    def estimate(receiver: Any, *args: Any, **kwargs: Any) -> int:
        return function(receiver, *args, **kwargs) if isinstance(receiver, (str, bytes)) else 0

    return estimate


def _tabs(text: str | bytes) -> int:
    return text.count("\t") if isinstance(text, str) else text.count(b"\t")


# What a str, bytes or int method would build, from its arguments.
_METHOD_SIZES: dict[str, Callable[..., int]] = {
    "center": _text_method(lambda s, width, fillchar=" ": max(len(s), _int(width))),
    "ljust": _text_method(lambda s, width, fillchar=" ": max(len(s), _int(width))),
    "rjust": _text_method(lambda s, width, fillchar=" ": max(len(s), _int(width))),
    "zfill": _text_method(lambda s, width: max(len(s), _int(width))),
    "expandtabs": _text_method(lambda s, tabsize=8: len(s) + _tabs(s) * max(_int(tabsize), 0)),
    "replace": _text_method(lambda s, old, new, count=-1: replace_size(s, old, new, count)),
    "translate": _text_method(lambda s, table: translate_size(s, table, _LIMIT)),
    "to_bytes": lambda n, length=1, byteorder="big", *, signed=False: (
        _int(length) if isinstance(n, int) else 0
    ),
}


class _BoundedFormatter(SandboxedFormatter):
    """str.format refusing, field by field, a result past the prompt limit ('{:>1000000000}')."""

    written = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self.written = len(format_string)
        return super().vformat(format_string, args, kwargs)

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion is not None and text_size(value, _LIMIT) > _LIMIT:  # '{0!r}': repr(value) first
            raise too_large(f".format() would build more than {_LIMIT:,} characters")
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.written += spec_size(value, format_spec, _LIMIT)
        if self.written > _LIMIT:
            raise too_large(f".format() would build more than {_LIMIT:,} characters")
        return super().format_field(value, format_spec)


class _BoundedEscapeFormatter(_BoundedFormatter, EscapeFormatter):
    pass
