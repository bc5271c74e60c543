"""The values kaoshi's options take, for a command line, a form or a config check: methods, multiple-choice
policies, judge modes, vote methods, groupings, tokenisations, split strata, prompt templates."""

from __future__ import annotations

from kaoshi.analysis.contamination import GROUPINGS as CONTAMINATION_GROUPINGS
from kaoshi.analysis.voting import VOTE_METHODS
from kaoshi.data.split import STRATA
from kaoshi.prompts.judge import JUDGE_MODES
from kaoshi.prompts.registry import TEMPLATES
from kaoshi.runner.run import METHODS
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
]
