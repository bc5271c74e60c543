"""User templates from a Jinja2 file: values only (sandboxed), every variable checked when loaded."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2.exceptions import SecurityError

from kaoshi.data.errors import DataError
from kaoshi.data.limits import MAX_PROMPT_CHARS
from kaoshi.data.model import Exam, Question, format_gold
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Prompt, RenderOptions
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars
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
    _compiled: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def load(cls, path: Path) -> UserTemplate:
        from jinja2 import StrictUndefined, TemplateSyntaxError, meta
        from jinja2.sandbox import SandboxedEnvironment

        try:
            source = path.read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise DataError(f"{path}: cannot read prompt template: {exc.strerror or exc}") from exc
        env = _bounded_environment(SandboxedEnvironment)(
            undefined=StrictUndefined, keep_trailing_newline=False, autoescape=False
        )
        try:
            parsed = env.parse(source)
        except TemplateSyntaxError as exc:
            raise DataError(f"{path}:{exc.lineno}: template syntax error: {exc.message}") from exc
        unknown = sorted(meta.find_undeclared_variables(parsed) - VARIABLES)
        if unknown:
            raise DataError(
                f"{path}: template uses unknown variable(s) {', '.join(unknown)} "
                f"(available: {', '.join(sorted(VARIABLES))})"
            )
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        return cls(path, source, f"file:{path}@{digest}", _compiled=env.from_string(source))

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
        """The rendered text, stopped with a DataError once it passes MAX_PROMPT_CHARS."""
        parts: list[str] = []
        size = 0
        try:
            for part in self._compiled.generate(values):
                size += len(part)
                if size > MAX_PROMPT_CHARS:
                    raise _OutputTooLarge(f"its output passes {MAX_PROMPT_CHARS:,} characters")
                parts.append(part)
        except _OutputTooLarge as exc:
            raise DataError(
                f"{self.path}: the prompt template renders too much text: {exc} "
                f"(the limit on one prompt is {MAX_PROMPT_CHARS:,} characters)"
            ) from None
        except SecurityError as exc:
            raise TemplateSecurityError(
                f"{self.path}: the prompt template reaches outside the values it is given ({exc}); "
                "a template may only use the question's fields"
            ) from None
        return "".join(parts)

    def answer_end(self, chat: bool) -> str | None:
        # A user template's layout after an answer is its own; a line break ends an answer line in any
        # layout that puts the answer on one. Chat: the whole template is one user turn, so the answer
        # ends the assistant turn.
        return None if chat else "\n"


class TemplateSecurityError(DataError, SecurityError):
    """A user template that tried to leave the sandbox: bad input (exit 2), and still a SecurityError."""


class _OutputTooLarge(Exception):
    """A template expression or its output would pass the prompt size limit."""


def _bounded_environment(base: type[Any]) -> type[Any]:
    """The sandbox, with `*` and `**` refused where the result would pass MAX_PROMPT_CHARS: the operand is
    built whole before any output is written, so an output limit alone would come too late."""

    class BoundedEnvironment(base):  # type: ignore[misc]
        intercepted_binops = frozenset({"*", "**"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "*":
                for sequence, count in ((left, right), (right, left)):
                    if (
                        isinstance(sequence, (str, list, tuple))
                        and isinstance(count, int)
                        and len(sequence) * count > MAX_PROMPT_CHARS
                    ):
                        raise _OutputTooLarge(
                            f"'* {count:,}' would build {len(sequence) * count:,} characters or items"
                        )
            elif (
                operator == "**"
                and isinstance(left, int)
                and isinstance(right, int)
                and right > 0
                and abs(left).bit_length() * right > 8 * MAX_PROMPT_CHARS
            ):
                raise _OutputTooLarge(f"'{left} ** {right}' is too large a number")
            return super().call_binop(context, operator, left, right)

    return BoundedEnvironment
