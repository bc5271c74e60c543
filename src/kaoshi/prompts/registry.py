"""Prompt templates by name: kaoshi's generic ones, those a program registers, and user template files.

A benchmark's own templates live in its package (kaoshi.benchmarks.<name>); kaoshi.benchmarks.get_template
looks in all of them.
"""

from __future__ import annotations

from pathlib import Path

from kaoshi.data.model import Exam
from kaoshi.errors import InputError, UnknownName
from kaoshi.prompts.base import Template
from kaoshi.prompts.exam_style import MIXED_EXAM
from kaoshi.prompts.plain import PlainTemplate
from kaoshi.prompts.user import UserTemplate

CORE_TEMPLATES: dict[str, Template] = {t.name: t for t in (PlainTemplate(), MIXED_EXAM)}
_registered: dict[str, Template] = {}


def register_template(template: Template, *, replace: bool = False) -> Template:
    """Make `template` known by its name to `kaoshi run --prompt` and kaoshi.benchmarks.get_template."""
    name = getattr(template, "name", "")
    if not isinstance(name, str) or not name.strip():
        raise InputError("a template needs a name")
    if not replace and (name in _registered or name in CORE_TEMPLATES):
        raise InputError(f"template {name!r} is already known (replace=True to take it over)")
    _registered[name] = template
    return template


def unregister_template(name: str) -> None:
    """Forget a template register_template added."""
    if _registered.pop(name, None) is None:
        raise UnknownName(f"no template {name!r} was registered")


def registered_templates() -> dict[str, Template]:
    """kaoshi's generic templates, then those registered, by name (a registered one replaces a generic)."""
    return {**CORE_TEMPLATES, **_registered}


def is_template_file(name: str) -> bool:
    return name.startswith("file:") or name.endswith((".j2", ".jinja", ".jinja2"))


def load_template_file(name: str) -> Template:
    """A user template: `file:PATH` (also a bare path ending in .j2 / .jinja)."""
    return UserTemplate.load(Path(name.removeprefix("file:")))


def exemplars_for_run(
    template: Template, exam: Exam, pinned: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The exemplar ids a run pins, and notes to show. Templates with fixed exemplars (the QualBench
    protocol's demos) find them once for the whole run, so the run spec records which were used."""
    prepare = getattr(template, "prepare", None)
    if prepare is None:
        return pinned, ()
    ids, notes = prepare(exam, pinned)
    return tuple(ids), tuple(notes)
