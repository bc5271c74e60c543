"""`kaoshi.render_prompt`: the exact text (or chat messages) a question is sent with in a run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kaoshi.data import Exam
from kaoshi.prompts import Prompt
from kaoshi.runner.config import RunConfig
from kaoshi.runner.prepare import prompt_setup

_log = logging.getLogger("kaoshi")


@dataclass(frozen=True)
class RenderedPrompt:
    """A question's prompt and the template that made it (`prompt.payload()` is what a backend gets)."""

    prompt: Prompt
    template: str
    template_version: int
    chat: bool


def render_prompt(
    exam: Exam,
    question_id: str,
    *,
    prompt: str | None = None,
    shots: int | None = None,
    chat: bool = False,
    system: str | None = None,
    exemplars: Sequence[str] = (),
    exemplars_file: str | Path | None = None,
    notify: Callable[[str], None] | None = None,
) -> RenderedPrompt:
    """The prompt `kaoshi.evaluate` would send for one question with these options (a run's own context
    window may drop exemplars that do not fit; this shows them all)."""
    options = RunConfig(
        prompt=prompt,
        shots=shots,
        system=system,
        exemplars=tuple(exemplars),
        exemplars_file=Path(exemplars_file) if exemplars_file is not None else None,
    )
    setup = prompt_setup(exam, options, notify or _log.warning)
    question = setup.exam.question(question_id)
    rendered = setup.template.render(question, setup.exam, setup.render_options(chat, system))
    return RenderedPrompt(rendered, setup.template.name, setup.template.version, chat)
