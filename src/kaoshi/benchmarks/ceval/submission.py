"""The C-Eval test submission: an answer file (kaoshi.benchmarks.common.answer_files) of every C-Eval
subject, from a run on the test split."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kaoshi.benchmarks.ceval.subjects import CEVAL_SUBJECTS
from kaoshi.benchmarks.common.answer_files import AnswerFile, export_answer_file
from kaoshi.store.records import RunRecord, SampleRecord

CEVAL_SUBMISSION = AnswerFile("ceval", "C-Eval", subjects=tuple(CEVAL_SUBJECTS))


def export_ceval_submission(run: RunRecord, samples: Iterable[SampleRecord], path: Path) -> tuple[str, ...]:
    """Build, validate and write a run's C-Eval submission (see export_answer_file)."""
    return export_answer_file(CEVAL_SUBMISSION, run, samples, path)
