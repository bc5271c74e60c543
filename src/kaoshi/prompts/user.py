"""User templates from a Jinja2 file: values only (sandboxed), every variable checked when loaded, every
render bounded in steps, time and memory (jinja_sandbox), every failure an error naming the file and line."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from jinja2 import TemplateError, TemplateSyntaxError, meta, nodes
from jinja2.exceptions import SecurityError

from kaoshi.data.errors import DataError
from kaoshi.data.limits import MAX_PROMPT_CHARS, MAX_REASON_CHARS, MAX_TEMPLATE_CHARS, shorten
from kaoshi.data.model import Exam, Question, format_gold
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Prompt, RenderOptions
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars
from kaoshi.prompts.jinja_sandbox import (
    BUDGET_KEY,
    BoundedSandbox,
    RenderBudget,
    TemplateLimitError,
    TemplateLimits,
)
from kaoshi.qtypes import kind_of

# What a template may use. Each exemplar has the question's fields plus `answer` and `explanation`.
VARIABLES = frozenset(
    {
        "question",
        "options",
        "type",
        "type_zh",
        "subject",
        "domain",
        "category",
        "points",
        "exemplars",
        "system",
    }
)
DEFAULT_LIMITS = TemplateLimits()
# Tags that need another template file: a user template is one file.
_OTHER_FILES: dict[type[nodes.Node], str] = {
    nodes.Include: "{% include %}",
    nodes.Extends: "{% extends %}",
    nodes.Import: "{% import %}",
    nodes.FromImport: "{% from ... import %}",
}


def question_values(question: Question) -> dict[str, Any]:
    return {
        "question": question.stem,
        "options": [{"letter": letter, "text": text} for letter, text in question.options],
        "type": question.type.value,
        "type_zh": kind_of(question.type).wording.name_zh,
        "subject": question.subject or "",
        "domain": question.domain or "",
        "category": question.category or "",
        "points": question.points,
    }


@dataclass(frozen=True)
class UserTemplate:
    path: Path
    source: str
    name: str = ""
    version: int = 1
    default_shots: int = 0
    budget: GenerationBudget = DEFAULT_BUDGET
    limits: TemplateLimits = field(default=DEFAULT_LIMITS, compare=False)
    _compiled: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def load(cls, path: Path, limits: TemplateLimits = DEFAULT_LIMITS) -> UserTemplate:
        """The template in `path`; DataError naming the file (and line) for anything it may not do.
        limits: what one render may cost (kaoshi.data.limits: MAX_TEMPLATE_STEPS, MAX_TEMPLATE_WORK_CHARS,
        TEMPLATE_TIME_LIMIT_S)."""
        try:
            source = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise DataError(f"{path}: cannot read prompt template: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: prompt template is not UTF-8: {exc.reason}") from exc
        if len(source) > MAX_TEMPLATE_CHARS:
            raise DataError(f"{path}: template holds more than {MAX_TEMPLATE_CHARS:,} characters")
        env = BoundedSandbox()
        try:
            parsed = env.parse(source)
            _check_one_file(path, parsed)
            unknown = meta.find_undeclared_variables(parsed) - VARIABLES
            # `self` is the template itself, not a value: {{ self }}, self.block()
            unknown |= {name.name for name in parsed.find_all(nodes.Name) if name.name == "self"}
            if unknown:
                raise DataError(
                    f"{path}: template uses unknown variable(s) {', '.join(sorted(unknown))} "
                    f"(available: {', '.join(sorted(VARIABLES))})"
                )
            compiled = env.compile_bounded(parsed)
        except TemplateSyntaxError as exc:
            raise DataError(f"{path}:{exc.lineno}: template syntax error: {exc.message}") from None
        except (RecursionError, MemoryError, SyntaxError) as exc:
            # Python's own limits on the code Jinja compiles the template to (200 nested brackets, 20
            # nested blocks)
            raise DataError(f"{path}: template nests too deeply ({_reason(exc)})") from None
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        return cls(path, source, f"file:{path}@{digest}", limits=limits, _compiled=compiled)

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        exemplars = pick_exemplars(question, exemplar_pool(exam, options.exemplar_ids), options.shots)
        values = question_values(question)
        values["system"] = options.system or ""
        values["exemplars"] = [
            {**question_values(e), "answer": format_gold(e.answer), "explanation": e.explanation}
            for e in exemplars
        ]
        text = self._render_bounded(values)
        if options.chat:
            messages = ([("system", options.system)] if options.system else []) + [("user", text)]
            return Prompt.chat(messages, len(exemplars))
        return Prompt(text, len(exemplars))

    def _render_bounded(self, values: dict[str, Any]) -> str:
        """The rendered text; DataError naming the file and line for any failure or limit passed."""
        values[BUDGET_KEY] = RenderBudget(self.limits)
        parts: list[str] = []
        size = 0
        try:
            for part in self._compiled.generate(values):
                size += len(part)
                if size > MAX_PROMPT_CHARS:
                    raise TemplateLimitError(
                        f"renders too much text: its output passes {MAX_PROMPT_CHARS:,} characters"
                    )
                parts.append(part)
        except SecurityError as exc:
            raise TemplateSecurityError(
                f"{self.path}: the prompt template reaches outside the values it is given ({_reason(exc)}); "
                f"a template may only use the question's fields{_at_line(exc)}"
            ) from None
        except TemplateLimitError as exc:
            raise DataError(f"{self.path}: the prompt template {exc}{_at_line(exc)}") from None
        except RecursionError as exc:
            raise DataError(
                f"{self.path}: the prompt template recurses too deeply ({exc}){_at_line(exc)}"
            ) from None
        except Exception as exc:  # whatever the template's own code raises is the template's error
            raise DataError(
                f"{self.path}: the prompt template cannot be rendered: {_reason(exc)}{_at_line(exc)}"
            ) from None
        return "".join(parts)

    def answer_end(self, chat: bool) -> str | None:
        # A user template's layout after an answer is its own; a line break ends an answer line in any
        # layout that puts the answer on one. Chat: the whole template is one user turn, so the answer
        # ends the assistant turn.
        return None if chat else "\n"


class TemplateSecurityError(DataError, SecurityError):
    """A user template that tried to leave the sandbox: bad input (exit 2), and still a SecurityError."""


def _check_one_file(path: Path, parsed: nodes.Template) -> None:
    for kind, tag in _OTHER_FILES.items():
        for node in parsed.find_all(kind):
            raise DataError(
                f"{path}:{node.lineno}: template uses {tag}: a prompt template is one file, it cannot "
                "include, import or extend another"
            )


def _reason(exc: BaseException) -> str:
    """What went wrong, short: Jinja's own message, or Python's with the exception's name."""
    text = str(exc) if isinstance(exc, TemplateError) else f"{type(exc).__name__}: {exc}"
    return shorten(text, MAX_REASON_CHARS)


def _at_line(exc: BaseException) -> str:
    """' (line N)': the innermost template line the error passed through, as Jinja's traceback gives it."""
    line = None
    trace: TracebackType | None = exc.__traceback__
    while trace is not None:
        if "__jinja_exception__" in trace.tb_frame.f_globals:  # a frame Jinja made for a template line
            line = trace.tb_lineno
        trace = trace.tb_next
    return "" if line is None else f" (line {line})"
