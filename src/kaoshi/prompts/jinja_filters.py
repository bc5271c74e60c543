"""Jinja's filters and tests for user templates, each a step charged to the render's budget, and refused
before it runs where it would build more than a prompt holds (`'x'|center(10**9)`, `|indent(10**9)`,
`range(100000)|join('x' * 999999)`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from functools import update_wrapper
from typing import Any

from jinja2 import pass_context, pass_environment
from jinja2.filters import make_attrgetter
from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE

from kaoshi.data.limits import MAX_PROMPT_CHARS
from kaoshi.prompts.jinja_budget import RenderBudget, budget_of, too_large
from kaoshi.prompts.jinja_costs import indent_size, percent_size, replace_size, text_size, wrap_size

# HTML helpers with no use in a prompt, whose output grows in ways not worth estimating.
REFUSED_FILTERS = frozenset({"pprint", "urlize", "xmlattr"})
MAX_JSON_INDENT = 32
_LIMIT = MAX_PROMPT_CHARS
# Filters that write their value out as text: it must fit a prompt before it is written.
_WRITING = frozenset(
    {
        "capitalize", "center", "e", "escape", "forceescape", "format", "indent", "lower", "replace", "safe",
        "string", "striptags", "title", "trim", "truncate", "upper", "urlencode", "wordcount", "wordwrap",
    }
)  # fmt: skip
# Filters that read every item of their value (sorting, comparing): charged for it. (sum adds in linear
# time; join counts as it goes.)
_READING = frozenset({"dictsort", "groupby", "max", "min", "sort", "unique"})
# Filters that read their value item by item, lazily: each item is a step (a select that matches nothing
# still reads them all).
_LAZY = frozenset({"map", "reject", "rejectattr", "select", "selectattr"})


def bounded_filters(filters: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """Jinja's `filters`, bounded; sum adds lists in linear time; HTML-only filters left out."""
    given = {**filters, "sum": linear_sum}
    return {name: bounded_filter(name, f) for name, f in given.items() if name not in REFUSED_FILTERS}


def bounded_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """`function` (a Jinja filter), refused where it would build more than a prompt holds, and charged to
    the render's budget."""
    passes = _passes(function)
    estimate = _FILTER_SIZES.get(name)

    def bounded(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
        budget = budget_of(context)
        budget.tick()
        if name == "join":
            value, args, kwargs = _join_arguments(context, value, budget, *args, **kwargs)
        elif name in _LAZY or isinstance(value, Iterator):
            value = budget.ticking(value)  # each item a lazy map or select reads, or yields, is a step
            if name in _READING:
                value = list(value)
        if name in _READING:
            budget.charge_text(value)
        if name in _WRITING and not isinstance(value, str) and text_size(value, _LIMIT) > _LIMIT:
            raise too_large(f"|{name} would write more than {_LIMIT:,} characters")
        if estimate is not None:
            try:
                size = estimate(value, *args, **kwargs)
            except (TypeError, ValueError):
                size = 0  # wrong arguments: the filter itself says so
            if size > _LIMIT:
                raise too_large(f"|{name} would build {size:,} characters")
            budget.charge(size)
        return budget.charge_result(function(*_leading(passes, context), value, *args, **kwargs))

    # after update_wrapper, which copies the filter's own pass_* mark
    return pass_context(update_wrapper(bounded, function))


def bounded_test(function: Any) -> Callable[..., Any]:
    """`function` (a Jinja test), a step, charged for reading its arguments (`eq`, `in` compare them)."""
    passes = _passes(function)

    def bounded(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
        budget = budget_of(context)
        budget.tick()
        for argument in (value, *args, *kwargs.values()):
            budget.charge_read(argument)
        return function(*_leading(passes, context), value, *args, **kwargs)

    return pass_context(update_wrapper(bounded, function))


def _passes(function: Any) -> str | None:
    """What the filter or test takes first: 'context', 'eval_context', 'environment' or nothing."""
    return getattr(getattr(function, "jinja_pass_arg", None), "name", None)


def _leading(passes: str | None, context: Context) -> tuple[Any, ...]:
    if passes == "context":
        return (context,)
    if passes == "eval_context":
        return (context.eval_ctx,)
    if passes == "environment":
        return (context.environment,)
    return ()


def joined_items(items: Iterable[Any], separator: Any, budget: RenderBudget, what: str) -> list[Any]:
    """The items to join, read one by one (each a step), refused as soon as the joined text would pass the
    prompt limit: `range(100000)|join('x' * 999999)` stops at the second item."""
    between = len(separator) if isinstance(separator, (str, bytes)) else 0
    read: list[Any] = []
    size = 0
    for item in budget.ticking(items):
        size += text_size(item, _LIMIT) + (between if read else 0)
        if size > _LIMIT:
            raise too_large(f"{what} would build more than {_LIMIT:,} characters")
        read.append(item)
    budget.charge(size)
    return read


def _join_arguments(
    context: Context, value: Any, budget: RenderBudget, d: Any = "", attribute: str | int | None = None
) -> tuple[list[Any], tuple[Any, ...], dict[str, Any]]:
    """|join's items (its attribute of each, where it names one) read and checked, and its arguments."""
    if attribute is not None:
        value = map(make_attrgetter(context.environment, attribute), value)
    return joined_items(value, d, budget, "|join"), (d,), {}


@pass_environment
def linear_sum(
    environment: Any, iterable: Iterable[Any], attribute: str | int | None = None, start: Any = 0
) -> Any:
    """Jinja's sum, adding lists and tuples in linear time (Python's sum copies the total at each item:
    300,000 one-item lists took minutes)."""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    if not isinstance(start, (list, tuple)):
        return sum(iterable, start)
    total = list(start)
    for item in iterable:
        if type(item) is not type(start):
            raise TypeError(f'can only concatenate {type(start).__name__} (not "{type(item).__name__}")')
        total.extend(item)
    return total if isinstance(start, list) else tuple(total)


def bounded_json_dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps for |tojson, stopped once the text passes the prompt limit."""
    _json_indent(kwargs.get("indent"))
    parts: list[str] = []
    size = 0
    for part in json.JSONEncoder(**kwargs).iterencode(value):
        size += len(part)
        if size > _LIMIT:
            raise too_large(f"|tojson would write more than {_LIMIT:,} characters")
        parts.append(part)
    return "".join(parts)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _count(kind: str, count: Any) -> int:
    if isinstance(count, int) and count > MAX_RANGE:
        raise too_large(f"|{kind}({count:,}) would build more than {MAX_RANGE:,} lists or items")
    return _int(count)


def _json_indent(indent: Any) -> int:
    width = len(indent) if isinstance(indent, str) else _int(indent)
    if width > MAX_JSON_INDENT:
        raise too_large(
            f"|tojson(indent={width:,}) indents by more than {MAX_JSON_INDENT} characters a level"
        )
    return 0


# What a filter would build, from its own arguments (where that can be more than its value written out).
_FILTER_SIZES: dict[str, Callable[..., int]] = {
    "center": lambda value, width=80: max(len(_text(value)), _int(width)),
    "indent": lambda s, width=4, first=False, blank=False: indent_size(_text(s), width),
    "replace": lambda s, old, new, count=None: replace_size(
        _text(s), old, new, -1 if count is None else count
    ),
    "wordwrap": lambda s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True: wrap_size(
        _text(s), width, wrapstring
    ),
    "format": lambda value, *args, **kwargs: percent_size(_text(value), kwargs or args, _LIMIT),
    "batch": lambda value, linecount, fill_with=None: _count("batch", linecount),
    "slice": lambda value, slices, fill_with=None: _count("slice", slices),
    "tojson": lambda value, indent=None: _json_indent(indent),
}
