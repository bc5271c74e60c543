"""Prompts: templates that turn questions into model requests."""

from kaoshi.prompts.candidates import answer_candidates, candidate_answer
from kaoshi.prompts.template import TEMPLATES, PlainTemplate, Prompt, get_template

__all__ = ["TEMPLATES", "PlainTemplate", "Prompt", "answer_candidates", "candidate_answer", "get_template"]
