"""The values kaoshi's options take, for a command line, a form or a config check: methods, multiple-choice
policies, judge modes, vote methods, groupings, tokenisations, split strata, prompt templates; and how the
fields of the option dataclasses (kaoshi.RunConfig, kaoshi.models.ModelOptions) are spelled as options
(`option_fields`: each field with its `Option`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kaoshi.option_fields import CLI, Option, build_config, field_default, option_fields

# Each vocabulary is imported on first use (name -> (module, its name there)): a command asks for one or
# two, and all of them import the templates' jinja2, the run pipeline and the analyses (about 25 ms of
# `kaoshi report`, which reads only the option fields).
_VOCABULARIES = {
    "CONTAMINATION_GROUPINGS": ("kaoshi.analysis.contamination", "GROUPINGS"),
    "VOTE_METHODS": ("kaoshi.analysis.voting", "VOTE_METHODS"),
    "TEMPLATES": ("kaoshi.benchmarks.templates", "TEMPLATES"),
    "STRATA": ("kaoshi.data.split", "STRATA"),
    "JUDGE_MODES": ("kaoshi.prompts.judge", "JUDGE_MODES"),
    "METHODS": ("kaoshi.runner.samples", "METHODS"),
    "MULTI_POLICIES": ("kaoshi.scoring.grade", "MULTI_POLICIES"),
    "TOKENIZATIONS": ("kaoshi.scoring.text_metrics", "TOKENIZATIONS"),
}

if TYPE_CHECKING:
    from kaoshi.analysis.contamination import GROUPINGS as CONTAMINATION_GROUPINGS
    from kaoshi.analysis.voting import VOTE_METHODS
    from kaoshi.benchmarks.templates import TEMPLATES
    from kaoshi.data.split import STRATA
    from kaoshi.prompts.judge import JUDGE_MODES
    from kaoshi.runner.samples import METHODS
    from kaoshi.scoring.grade import MULTI_POLICIES
    from kaoshi.scoring.text_metrics import TOKENIZATIONS


def __getattr__(name: str) -> Any:
    if name not in _VOCABULARIES:
        raise AttributeError(f"module 'kaoshi.api.vocabulary' has no attribute {name!r}")
    module, attribute = _VOCABULARIES[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


__all__ = [
    "CLI",
    "CONTAMINATION_GROUPINGS",
    "JUDGE_MODES",
    "METHODS",
    "MULTI_POLICIES",
    "STRATA",
    "TEMPLATES",
    "TOKENIZATIONS",
    "VOTE_METHODS",
    "Option",
    "build_config",
    "field_default",
    "option_fields",
]
