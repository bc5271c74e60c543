"""Prompts: named, versioned templates that turn questions into model requests."""

from kaoshi.prompts.base import Fits, Message, Prompt, RenderOptions, Template, render_fitting
from kaoshi.prompts.candidates import answer_candidates, candidate_answer
from kaoshi.prompts.registry import BENCHMARK_DEFAULTS, TEMPLATES, default_template_name, get_template

__all__ = [
    "BENCHMARK_DEFAULTS",
    "TEMPLATES",
    "Fits",
    "Message",
    "Prompt",
    "RenderOptions",
    "Template",
    "answer_candidates",
    "candidate_answer",
    "default_template_name",
    "get_template",
    "render_fitting",
]
