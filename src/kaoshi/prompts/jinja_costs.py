"""What a user template's operation would build, estimated before it runs, so the sandbox (jinja_sandbox)
can refuse `'x'|center(10**9)` before Python allocates a GB. Estimates are upper bounds in characters (or
list items); they need not be exact, only never far below what the operation builds."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from jinja2.utils import Namespace

# The largest width or precision a number's digits may add beyond the format's own (a float prints at most
# about 310 digits before the point).
_NUMBER_CHARS = 320
_PERCENT_SPEC = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0\- +]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?[hlL]?(?P<kind>.?)"
)
_DIGITS = re.compile(r"\d+")


def text_size(value: Any, limit: int) -> int:
    """About len(str(value)), stopping once past `limit`. A list holding one long text 100,000 times is small
    in memory but huge written out: each reference counts, so the walk ends after `limit` characters. A
    container inside itself counts as `[...]`, as Python writes it."""
    total, children = _measure(value, nested=False)
    if children is None or total > limit:
        return total
    path = {id(value)}
    stack: list[tuple[int, Iterator[Any]]] = [(id(value), children)]
    while stack:
        item: Any = next(stack[-1][1], _END)
        kind = type(item)
        if kind is str:  # the common cases first: this walk may visit a million items
            total += len(item) + 3
        elif kind is int:
            total += int_digits(item) + 1
        elif item is _END:
            path.discard(stack.pop()[0])
        elif id(item) in path:
            total += 5
        else:
            size, children = _measure(item, nested=True)
            total += size
            if children is not None:
                path.add(id(item))
                stack.append((id(item), children))
        if total > limit:
            return total
    return total


_END = object()


def _measure(value: Any, nested: bool) -> tuple[int, Iterator[Any] | None]:
    """How long `value` itself writes (brackets, separators, quotes), and the items it holds."""
    if isinstance(value, (str, bytes)):
        return len(value) + (3 if nested or isinstance(value, bytes) else 0), None  # quotes, b''
    if isinstance(value, bool) or value is None:
        return 5, None
    if isinstance(value, int):
        return int_digits(value) + 1, None
    if isinstance(value, float):
        return 24, None
    if isinstance(value, (dict, Mapping)):  # {}, ': ' and ', ' between items
        return 2 + 4 * len(value), (part for pair in value.items() for part in pair)
    if isinstance(value, (list, tuple, set, frozenset)):  # ', ' between items: a million items count at once
        return 11 + 2 * len(value), iter(value)
    if isinstance(value, Namespace):
        attrs: dict[str, Any] = object.__getattribute__(value, "_Namespace__attrs")
        return 14 + 4 * len(attrs), (part for pair in attrs.items() for part in pair)
    return 100, None  # a default repr: <Macro ...>, <generator object ...>, range(0, 10)


def int_digits(number: int) -> int:
    """About how many decimal digits |number| has (never fewer)."""
    return int(abs(number).bit_length() * 0.30103) + 1


def power_digits(base: int, exponent: int) -> int:
    """About how many digits base ** exponent has (0 when it is not a large integer)."""
    if exponent <= 0 or abs(base) < 2:
        return 0
    return int(exponent * math.log10(abs(base))) + 1


def spec_size(value: Any, spec: str, limit: int) -> int:
    """About how long format(value, spec) is: its widths and precision, or the value written out."""
    runs = _DIGITS.findall(spec)
    if any(len(run) > 18 for run in runs):
        return limit + 1
    widest = max((int(run) for run in runs), default=0)
    written = text_size(value, limit)
    if isinstance(value, int):
        written += written // 3  # digit grouping: 1,000,000
    return max(widest + _NUMBER_CHARS, written)


def percent_size(template: str, args: Any, limit: int) -> int:
    """About how long `template % args` is; past `limit` it stops counting. Each `%(key)s` counts its value
    again (`'%(a)s' * 100000 % {'a': text}` writes the text 100,000 times)."""
    mapping = args if isinstance(args, Mapping) else None
    positional = list(args) if isinstance(args, tuple) else [args]
    total = len(template)
    for match in _PERCENT_SPEC.finditer(template):
        if match["kind"] == "%":
            continue
        numbers = []
        for part in ("width", "precision"):
            if match[part] == "*":
                taken = positional.pop(0) if positional else 0
                numbers.append(taken if isinstance(taken, int) else 0)
            elif match[part]:
                numbers.append(int(match[part]) if len(match[part]) < 20 else limit + 1)
        if mapping is not None and match["key"] is not None:
            value = mapping.get(match["key"])
        else:
            value = positional.pop(0) if positional else None
        total += max([*numbers, 0]) + _NUMBER_CHARS + text_size(value, limit)
        if total > limit:
            break
    return total


def lines_of(text: str | bytes) -> int:
    return (text.count("\n") if isinstance(text, str) else text.count(b"\n")) + 2


def replace_size(text: str | bytes, old: Any, new: Any, count: Any = -1) -> int:
    """About how long text.replace(old, new, count) is: '' as `old` matches between every character."""
    if not isinstance(old, type(text)) or not isinstance(new, type(text)):
        return len(text)
    matches = text.count(old) if old else len(text) + 1  # type: ignore[arg-type]
    if isinstance(count, int) and count >= 0:
        matches = min(matches, count)
    return len(text) + matches * max(0, len(new) - len(old))


def translate_size(text: str | bytes, table: Any, limit: int) -> int:
    """About how long text.translate(table) is: each character may become its longest replacement."""
    if not isinstance(table, Mapping):
        return len(text)
    longest = max((text_size(v, limit) for v in table.values() if isinstance(v, (str, bytes))), default=1)
    return len(text) * max(1, longest)


def wrap_size(text: str, width: Any, wrapstring: Any) -> int:
    """About how long a text wrapped to `width` is: a line holds at least half a width of text (or breaks
    where the text does), and each line gets one `wrapstring`."""
    step = max(1, width // 2) if isinstance(width, int) else 1
    separator = len(wrapstring) if isinstance(wrapstring, str) else 1
    return len(text) + (len(text) // step + lines_of(text)) * separator


def indent_size(text: str, width: Any) -> int:
    """About how long text|indent(width) is: every line gets the indent."""
    indent = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
    return len(text) + lines_of(text) * max(0, indent)
