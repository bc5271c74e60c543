"""The values kaoshi's options take, for a command line, a form or a config check: methods, multiple-choice
policies, judge modes, vote methods, groupings, tokenisations, split strata, prompt templates; and how the
fields of the option dataclasses (kaoshi.RunConfig, kaoshi.models.ModelOptions) are spelled as options
(`option_fields`: each field with its `Option`)."""

from __future__ import annotations

from kaoshi.analysis.contamination import GROUPINGS as CONTAMINATION_GROUPINGS
from kaoshi.analysis.voting import VOTE_METHODS
from kaoshi.benchmarks.templates import TEMPLATES
from kaoshi.data.split import STRATA
from kaoshi.option_fields import Option, build_config, field_default, option_fields
from kaoshi.prompts.judge import JUDGE_MODES
from kaoshi.runner.samples import METHODS
from kaoshi.scoring import MULTI_POLICIES
from kaoshi.scoring.text_metrics import TOKENIZATIONS

__all__ = [
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
