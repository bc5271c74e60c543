"""FinEval (SUFE-AIFLM-Lab/FinEval): finance questions in C-Eval's layout and 34 subjects in four
categories; its leaderboard averages subject accuracies, and its test answers (labels withheld) go to the
FinEval site as a submission file like C-Eval's. The data is on GitHub and the hub as a zip of the
folders, which `datasets` does not read: --data PATH."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, Exporter, LoadRequest, PublishedCheck, Specificity
from kaoshi.benchmarks.common.ceval_layout import CevalStyle, claim_in_layout, load_ceval_layout
from kaoshi.benchmarks.common.statistics import CATEGORY_AVERAGES
from kaoshi.benchmarks.fineval.prompts import FINEVAL_ANSWER_ONLY, FINEVAL_COT
from kaoshi.benchmarks.fineval.subjects import FINEVAL_CATEGORIES, FINEVAL_SUBJECTS
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.results.subject_layout import SubjectLayout

if TYPE_CHECKING:
    from kaoshi.store.records import RunRecord, SampleRecord

FINEVAL_STYLE = CevalStyle("fineval", "FinEval", {s: info.category for s, info in FINEVAL_SUBJECTS.items()})


def load(request: LoadRequest) -> LoadResult:
    """A FinEval folder (dev/ val/ test/ CSV files) or one of its files; the val split by default."""
    if request.data is None:
        raise DataError(
            "FinEval is published as a zip of dev/ val/ test/ folders (github.com/SUFE-AIFLM-Lab/FinEval), "
            "which the Hugging Face loader does not read: download it and pass --data PATH"
        )
    return load_ceval_layout(request.data, request.split, FINEVAL_STYLE, subjects=request.subjects)


def is_fineval_data(path: Path) -> Specificity | None:
    """A folder (or one file) in C-Eval's layout whose subjects are mostly FinEval's, by those names; C-Eval
    claims the layout itself, so a folder of other subjects stays C-Eval's."""
    return claim_in_layout(path, FINEVAL_SUBJECTS, owns_layout=False)


def write_submission(run: RunRecord, samples: Iterable[SampleRecord], path: Path) -> tuple[str, ...]:
    """The FinEval test submission JSON of a run on the test split, all 34 subjects."""
    # Late import: the exporter reads the store (sqlite3), which loading FinEval never needs.
    from kaoshi.benchmarks.common.answer_files import AnswerFile, export_answer_file

    kind = AnswerFile("fineval", "FinEval", subjects=tuple(FINEVAL_SUBJECTS))
    return export_answer_file(kind, run, samples, path)


FINEVAL = Benchmark(
    name="fineval",
    description="FinEval: four-option finance questions in 34 subjects and four categories (dev, val, test)",
    load=load,
    default_prompt="fineval",
    detect=is_fineval_data,
    categories=FINEVAL_STYLE.categories,
    metrics=(CATEGORY_AVERAGES,),
    leaderboard=SubjectLayout(
        {subject: (category,) for subject, category in FINEVAL_STYLE.categories.items()}, FINEVAL_CATEGORIES
    ),
    exporters=(Exporter("fineval-submission", "the FinEval test submission JSON", write_submission),),
    formats="a folder with dev/ val/ test/ <subject>_<split>.csv files (C-Eval's layout), or one such file",
    splits=("dev", "val", "test"),
    size="4,661: 170 dev + 1,151 val + 3,340 test (test answers withheld)",
    licence="CC BY-NC-SA 4.0 (the hub card; the GitHub code is Apache-2.0)",
    published=PublishedCheck(
        repository="SUFE-AIFLM-Lab/FinEval",
        commit="b676e912f52f35d515d635ea67df4626deaa69b2",
        official_count="3,340 val (v1 data, from 0a5f23f^)",
        loaded="3,340, no warning",
        prompt_parity=(
            "identical on 3,340 rows (C-Eval's code, whose wording FinEval took): 0/5-shot, CoT, chat"
        ),
        score_parity="—",
    ),
    templates=(FINEVAL_ANSWER_ONLY, FINEVAL_COT),
)
