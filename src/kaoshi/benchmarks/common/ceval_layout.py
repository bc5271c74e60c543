"""C-Eval's layout, {split}/{subject}_{split}.csv files (dev / val / test): the reader and the detection
that C-Eval and the benchmarks published in its layout (FinEval) share, each with its own subject table."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NamedTuple

from kaoshi.benchmarks.base import Specificity
from kaoshi.benchmarks.common.abcd import ABCD, abcd_question
from kaoshi.data.collect import LoadResult, QuestionCollector, require_id
from kaoshi.data.csvrows import iter_csv_records, read_csv_header
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.model import Exam, Question, Source
from kaoshi.data.split_folders import (
    exemplar_files,
    files_and_pool,
    locate_split_files,
    note_empty_file,
    select_subjects,
)

CEVAL_SPLITS = ("dev", "val", "test")
_REQUIRED_COLUMNS = ("id", "question", *ABCD)


class CevalSubject(NamedTuple):
    english: str
    chinese: str
    category: str  # C-Eval's: STEM, Social Science, Humanities or Other; FinEval's: Finance, ...


@dataclass(frozen=True)
class CevalStyle:
    """A benchmark in C-Eval's layout: its registry name, its name in messages, subject -> category."""

    name: str
    title: str
    categories: Mapping[str, str]
    default_split: str = "val"  # the split with answers that its numbers are usually reported on


def ceval_question(
    record: Mapping[str, object], subject: str, split: str, source: Source | None, style: CevalStyle
) -> Question:
    """One C-Eval-layout row as a Question with id '{subject}/{id}'. The test split may have no answer."""
    row_id = require_id(dict(record), "id")
    category = style.categories.get(subject)
    return abcd_question(
        record, row_id=row_id, subject=subject, category=category, split=split, source=source
    )


def load_ceval_layout(
    path: Path, split: str | None, style: CevalStyle, *, subjects: Iterable[str] | None = None
) -> LoadResult:
    """One split of a folder in C-Eval's layout, or of one `<subject>_<split>.csv` file; the dev split,
    when present, becomes the few-shot pool."""
    if path.is_file():
        split = _split_of_file(path, split, style)
    located = locate_split_files(
        path, split, splits=CEVAL_SPLITS, default_split=style.default_split, suffix=".csv", title=style.title
    )
    wanted = frozenset(subjects) if subjects else None
    errors: list[RowError] = []
    warnings: list[str] = []
    folder, files, pool = files_and_pool(located, lambda split: f"_{split}.csv")
    questions = _read_split(folder, files, located.split, wanted, style, errors, warnings)
    dev = located.data / "dev"
    chosen = exemplar_files(dev, pool, (q.subject for q in questions), warnings)
    fewshot = _read_split(dev, chosen, "dev", None, style, errors, warnings)
    metadata = {"benchmark": style.name, "path": str(path), "split": located.split}
    exam = Exam(style.name, tuple(questions), tuple(fewshot), metadata)
    return LoadResult(exam, tuple(errors), (), tuple(warnings))


def _split_of_file(path: Path, split: str | None, style: CevalStyle) -> str:
    """A `<subject>_<split>.csv` file is of the split its name says."""
    named = next((s for s in CEVAL_SPLITS if path.name.endswith(f"_{s}.csv")), None)
    if named is None:
        raise DataError(f"{path}: not a {style.title} file (expected <subject>_<split>.csv, split one of "
                        f"{', '.join(CEVAL_SPLITS)})")  # fmt: skip
    if split is not None and split != named:
        raise DataError(f"{path}: this is a '{named}' file, but split '{split}' was asked")
    return named


def _read_split(
    folder: Path,
    files: Mapping[str, Path],
    split: str,
    wanted: frozenset[str] | None,
    style: CevalStyle,
    errors: list[RowError],
    warnings: list[str],
) -> list[Question]:
    questions: list[Question] = []
    for subject, path in select_subjects(folder, files, wanted, warnings):
        if subject not in style.categories:
            warnings.append(f"{path}: '{subject}' is not a {style.title} subject; loaded with no category")
        collector = QuestionCollector(str(path))
        for record in iter_csv_records(path, _REQUIRED_COLUMNS):
            if isinstance(record, RowError):
                collector.error(record)
                continue
            source = Source(str(path), record.line)
            collector.add(record.line, partial(ceval_question, record.cells, subject, split, source, style))
        note_empty_file(path, subject, collector, warnings)
        questions.extend(collector.questions)
        errors.extend(collector.errors)
    return questions


def ceval_layout_subjects(path: Path) -> frozenset[str]:
    """The subjects of the `<subject>_<split>.csv` files in the split folders of the folder `path` (or of
    its data/ folder), or of the one such file `path` is: empty when `path` is not in C-Eval's layout.
    Names only, no file is read, so a detector can tell C-Eval from FinEval by their subjects."""
    if path.is_file():
        split = next((s for s in CEVAL_SPLITS if path.name.endswith(f"_{s}.csv")), None)
        return frozenset({path.name.removesuffix(f"_{split}.csv")}) if split else frozenset()
    found: set[str] = set()
    for folder in (path, path / "data"):
        for split in CEVAL_SPLITS:
            if (folder / split).is_dir():
                suffix = f"_{split}.csv"
                found.update(
                    p.name[: -len(suffix)] for p in (folder / split).iterdir() if p.name.endswith(suffix)
                )
    return frozenset(found)


def claim_in_layout(path: Path, subjects: Collection[str], *, owns_layout: bool) -> Specificity | None:
    """How a benchmark published in C-Eval's layout claims `path` (a folder in that layout, or one such
    file with C-Eval's columns): by its own names when most of the subjects there are among `subjects`;
    else by the layout alone for C-Eval, whose layout it is (`owns_layout`), and not at all for a
    benchmark that only took the layout (FinEval)."""
    found = ceval_layout_subjects(path)
    if not found:
        return None
    if path.is_file() and not {"id", "question", *ABCD} <= set(read_csv_header(path) or ()):
        return None
    if 2 * len(found & set(subjects)) > len(found):
        return Specificity.OWN_NAMES
    return Specificity.FORMAT if owns_layout else None
