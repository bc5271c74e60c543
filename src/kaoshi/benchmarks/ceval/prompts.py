"""C-Eval's prompt presets, answer-only and chain-of-thought: the official evaluators' wording
(kaoshi.benchmarks.common.ceval_prompts, which FinEval's presets share) with C-Eval's subject names."""

from __future__ import annotations

from collections.abc import Mapping

from kaoshi.benchmarks.ceval.subjects import CEVAL_SUBJECTS
from kaoshi.benchmarks.common.ceval_prompts import ANSWER_ONLY_BUDGET, COT_BUDGET, CevalTemplate

CEVAL_NAMES: Mapping[str, str] = {subject: info.chinese for subject, info in CEVAL_SUBJECTS.items()}
CEVAL_ANSWER_ONLY = CevalTemplate(
    "ceval-answer-only", cot=False, budget=ANSWER_ONLY_BUDGET, subject_names=CEVAL_NAMES
)
CEVAL_COT = CevalTemplate("ceval-cot", cot=True, budget=COT_BUDGET, subject_names=CEVAL_NAMES)
