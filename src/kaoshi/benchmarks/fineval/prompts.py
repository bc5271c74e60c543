"""FinEval's prompt presets: C-Eval's wording (kaoshi.benchmarks.common.ceval_prompts), which FinEval took,
with FinEval's subject names in the header."""

from __future__ import annotations

from collections.abc import Mapping

from kaoshi.benchmarks.common.ceval_prompts import ANSWER_ONLY_BUDGET, COT_BUDGET, CevalTemplate
from kaoshi.benchmarks.fineval.subjects import FINEVAL_SUBJECTS

FINEVAL_NAMES: Mapping[str, str] = {subject: info.chinese for subject, info in FINEVAL_SUBJECTS.items()}
FINEVAL_ANSWER_ONLY = CevalTemplate(
    "fineval", cot=False, budget=ANSWER_ONLY_BUDGET, subject_names=FINEVAL_NAMES
)
FINEVAL_COT = CevalTemplate("fineval-cot", cot=True, budget=COT_BUDGET, subject_names=FINEVAL_NAMES)
