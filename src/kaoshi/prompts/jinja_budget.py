"""What one render of a user template may cost, and the hooks that charge for it.

A render's RenderBudget counts steps (loop iterations, calls, filters, outputs), work (characters and items
built on the way, the output included) and time. The template's tree is instrumented when it is compiled:
each output, `~`, loop, comparison and dict key goes through a hook filter (named with a space, so no
template can name it), which finds the budget in the render's context under BUDGET_KEY."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.runtime import Context, markup_join, str_join
from jinja2.visitor import NodeTransformer

from kaoshi.data.limits import (
    MAX_PROMPT_CHARS,
    MAX_TEMPLATE_STEPS,
    MAX_TEMPLATE_WORK_CHARS,
    TEMPLATE_TIME_LIMIT_S,
)
from kaoshi.prompts.jinja_costs import text_size

# The render's budget sits in its context under a name no template can write.
BUDGET_KEY = "kaoshi budget"
# An item of a list a template builds counts as this many characters of work: a slot, often a new object.
ITEM_CHARS = 8
CONTAINERS = (list, tuple, dict, set, frozenset)


@dataclass(frozen=True)
class TemplateLimits:
    """What rendering one prompt may cost; the defaults are kaoshi.data.limits'."""

    steps: int = MAX_TEMPLATE_STEPS  # loop iterations, calls, filters and outputs
    work_chars: int = MAX_TEMPLATE_WORK_CHARS  # characters and items built on the way, the output included
    seconds: float = TEMPLATE_TIME_LIMIT_S


class TemplateLimitError(Exception):
    """A render passed a limit; the message says which, as a phrase after 'the prompt template'."""


def too_large(what: str) -> TemplateLimitError:
    return TemplateLimitError(f"renders too much text: {what}")


class RenderBudget:
    """One render's steps, work and deadline."""

    def __init__(self, limits: TemplateLimits) -> None:
        self.limits = limits
        self.steps = 0
        self.work = 0
        self.deadline = time.monotonic() + limits.seconds

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.limits.steps:
            raise TemplateLimitError(
                f"does too much work: more than {self.limits.steps:,} steps (loop iterations, calls, filters "
                "and outputs) for one prompt"
            )
        if self.steps % 32 == 0 and time.monotonic() > self.deadline:  # the clock, every few steps
            raise TemplateLimitError(
                f"takes too long: more than {self.limits.seconds:g} seconds for one prompt"
            )

    def charge(self, chars: int) -> None:
        self.work += chars
        if self.work > self.limits.work_chars:
            raise too_large(
                f"it builds more than {self.limits.work_chars:,} characters in all on the way "
                f"(the limit on one prompt is {MAX_PROMPT_CHARS:,})"
            )

    def charge_text(self, value: Any) -> None:
        """Charge what reading every item of `value` costs (sorting it, comparing its texts)."""
        self.charge(text_size(value, self.limits.work_chars - self.work))

    def charge_read(self, value: Any) -> Any:
        """`value`, charged for what comparing or hashing it reads where it is a container (a list that
        holds one list 100,000 times compares 100,000 times as many items as it holds)."""
        if isinstance(value, CONTAINERS):
            self.charge_text(value)
        return value

    def charge_result(self, result: Any) -> Any:
        """`result`, charged for what it holds; refused if it is text longer than a prompt."""
        if isinstance(result, (str, bytes)):
            if len(result) > MAX_PROMPT_CHARS:
                raise too_large(f"a value of {len(result):,} characters")
            self.charge(len(result))
        elif isinstance(result, CONTAINERS):
            self.charge(ITEM_CHARS * len(result))
        return result

    def ticking(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.tick()
            yield item


def budget_of(context: Context) -> RenderBudget:
    # in the values the render was given: a context derived for a call or loop holds them too
    budget = context.parent.get(BUDGET_KEY)
    if not isinstance(budget, RenderBudget):
        raise RuntimeError("a user template rendered without its budget")
    return budget


# --- the hooks the instrumented tree calls ---------------------------------------------------------------


@pass_context
def _write(context: Context, value: Any) -> Any:
    """An output ({{ value }} or literal text): a step, refused past the prompt limit before str()."""
    budget = budget_of(context)
    budget.tick()
    size = len(value) if isinstance(value, str) else text_size(value, MAX_PROMPT_CHARS)
    if size > MAX_PROMPT_CHARS:
        raise too_large(f"an output would write more than {MAX_PROMPT_CHARS:,} characters")
    budget.charge(size)
    return value


@pass_context
def _concat(context: Context, *values: Any) -> str:
    """`a ~ b ~ c`, refused before it is built where it would pass the prompt limit."""
    budget = budget_of(context)
    budget.tick()
    size = 0
    for value in values:
        size += len(value) if isinstance(value, str) else text_size(value, MAX_PROMPT_CHARS)
        if size > MAX_PROMPT_CHARS:
            raise too_large(f"'~' would build more than {MAX_PROMPT_CHARS:,} characters")
    budget.charge(size)
    return markup_join(values) if context.eval_ctx.autoescape else str_join(values)


@pass_context
def _loop(context: Context, iterable: Iterable[Any]) -> Iterator[Any]:
    """A {% for %} loop's items, each a step."""
    return budget_of(context).ticking(iterable)


@pass_context
def _read(context: Context, value: Any) -> Any:
    """A value compared or hashed (==, in, a dict key), charged for what that reads."""
    return budget_of(context).charge_read(value)


HOOKS: dict[str, Callable[..., Any]] = {
    "kaoshi write": _write,
    "kaoshi concat": _concat,
    "kaoshi loop": _loop,
    "kaoshi read": _read,
}


def instrument(tree: nodes.Template) -> nodes.Template:
    """The parsed template with each output, `~`, loop, comparison and dict key passed through HOOKS (an
    environment that has them as filters compiles it)."""
    instrumented = _Instrument().visit(tree)
    assert isinstance(instrumented, nodes.Template)
    return instrumented


class _Instrument(NodeTransformer):
    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _hook("kaoshi loop", node.iter)
        return node

    def visit_Compare(self, node: nodes.Compare) -> nodes.Node:
        # == and `in` on containers read them whole, however many times they hold the same list
        self.generic_visit(node)
        node.expr = _hook("kaoshi read", node.expr)
        for operand in node.ops:
            operand.expr = _hook("kaoshi read", operand.expr)
        return node

    def visit_Pair(self, node: nodes.Pair) -> nodes.Node:
        # a dict's key is hashed: a tuple of tuples is hashed whole
        self.generic_visit(node)
        node.key = _hook("kaoshi read", node.key)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _hook("kaoshi concat", *node.nodes)

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [
            # literal text stays unescaped under autoescape, as Jinja writes it
            nodes.MarkSafeIfAutoescape(_hook("kaoshi write", child), lineno=child.lineno)
            if isinstance(child, nodes.TemplateData)
            else _hook("kaoshi write", child)
            for child in node.nodes
        ]
        return node


def _hook(name: str, value: nodes.Node, *more: nodes.Node) -> nodes.Filter:
    return nodes.Filter(value, name, list(more), [], None, None, lineno=value.lineno)
