"""Prompts: named, versioned templates that turn questions into model requests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

# Names are imported on first use: a benchmark's templates need kaoshi.prompts.base, and the registry of
# user templates imports jinja2 (about 20 ms), which only a run, `kaoshi prompt` and the help of the
# templates need (`kaoshi report` reads a benchmark, never renders a prompt).
_EXPORTS = {
    **dict.fromkeys(
        ("Fits", "Message", "Prompt", "RenderOptions", "Template", "render_fitting"), "kaoshi.prompts.base"
    ),
    **dict.fromkeys(("answer_candidates", "candidate_answer"), "kaoshi.prompts.candidates"),
    **dict.fromkeys(
        ("register_template", "registered_templates", "unregister_template"), "kaoshi.prompts.registry"
    ),
}

if TYPE_CHECKING:
    from kaoshi.prompts.base import Fits, Message, Prompt, RenderOptions, Template, render_fitting
    from kaoshi.prompts.candidates import answer_candidates, candidate_answer
    from kaoshi.prompts.registry import register_template, registered_templates, unregister_template


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "Fits",
    "Message",
    "Prompt",
    "RenderOptions",
    "Template",
    "answer_candidates",
    "candidate_answer",
    "register_template",
    "registered_templates",
    "render_fitting",
    "unregister_template",
]
