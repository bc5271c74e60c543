"""Prompts: named, versioned templates that turn questions into model requests."""

from kaoshi.prompts.base import Fits, Message, Prompt, RenderOptions, Template, render_fitting
from kaoshi.prompts.candidates import answer_candidates, candidate_answer
from kaoshi.prompts.registry import register_template, registered_templates, unregister_template

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
