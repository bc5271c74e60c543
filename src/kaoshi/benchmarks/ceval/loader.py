"""C-Eval's own files: its folders or one file in its layout (read by kaoshi.benchmarks.common.ceval_layout,
which FinEval shares) and the hub copy, with C-Eval's subject table; C-Eval Hard keeps its 8 subjects."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from pathlib import Path

from kaoshi.benchmarks.ceval.subjects import CEVAL_HARD_SUBJECTS, CEVAL_SUBJECTS
from kaoshi.benchmarks.common.ceval_layout import CevalStyle as CevalStyle
from kaoshi.benchmarks.common.ceval_layout import ceval_question
from kaoshi.benchmarks.common.ceval_layout import load_ceval_layout as load_ceval_layout
from kaoshi.data.collect import LoadResult, QuestionCollector
from kaoshi.data.errors import RowError
from kaoshi.data.hub import fetch
from kaoshi.data.model import Exam, Question

CEVAL_STYLE = CevalStyle(
    "ceval", "C-Eval", {subject: info.category for subject, info in CEVAL_SUBJECTS.items()}
)
CEVAL_HARD_STYLE = CevalStyle("ceval-hard", "C-Eval", CEVAL_STYLE.categories)


def load_ceval(
    root: Path, split: str | None = None, *, subjects: Iterable[str] | None = None, hard: bool = False
) -> LoadResult:
    """Load one split of a C-Eval folder (or one of its files); C-Eval Hard keeps its 8 subjects."""
    style = CEVAL_HARD_STYLE if hard else CEVAL_STYLE
    return load_ceval_layout(root, split, style, subjects=_wanted_subjects(subjects, hard))


def load_ceval_hub(
    split: str,
    subjects: Iterable[str] | None,
    hub_id: str,
    name: str = "ceval",
    style: CevalStyle = CEVAL_STYLE,
) -> LoadResult:
    """One split of a C-Eval-layout benchmark from the Hugging Face hub (a dataset config per subject), the
    dev split as the few-shot pool; every subject unless `subjects` names some."""
    chosen = list(subjects) if subjects else list(style.categories)
    questions: list[Question] = []
    fewshot: list[Question] = []
    errors: list[RowError] = []
    for subject in chosen:
        wanted = [(split, questions)] + ([("dev", fewshot)] if split != "dev" else [])
        for split_name, sink in wanted:
            rows = fetch(hub_id, name=subject, split=split_name)
            collector = QuestionCollector(f"hf://{hub_id}/{subject}/{split_name}")
            for index, record in enumerate(rows):
                parse = partial(ceval_question, dict(record), subject, split_name, None, style)
                collector.add(index + 1, parse)
            sink.extend(collector.questions)
            errors.extend(collector.errors)
    exam = Exam(name, tuple(questions), tuple(fewshot), {"benchmark": name, "path": hub_id, "split": split})
    return LoadResult(exam, tuple(errors))


def _wanted_subjects(subjects: Iterable[str] | None, hard: bool) -> frozenset[str] | None:
    chosen = set(subjects) if subjects else None
    if hard:
        chosen = set(CEVAL_HARD_SUBJECTS) & chosen if chosen is not None else set(CEVAL_HARD_SUBJECTS)
    return frozenset(chosen) if chosen is not None else None
