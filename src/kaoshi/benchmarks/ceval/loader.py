"""C-Eval's layout, {split}/{subject}_{split}.csv files (dev / val / test): C-Eval's own, and any benchmark
published in it (FinEval), each with its subject table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from kaoshi.benchmarks.ceval.subjects import CEVAL_HARD_SUBJECTS, CEVAL_SUBJECTS
from kaoshi.benchmarks.common.abcd import ABCD, abcd_question
from kaoshi.data.collect import LoadResult, QuestionCollector, require_id
from kaoshi.data.csvrows import iter_csv_records
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.hub import fetch
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


@dataclass(frozen=True)
class CevalStyle:
    """A benchmark in C-Eval's layout: its registry name, its name in messages, subject -> category."""

    name: str
    title: str
    categories: Mapping[str, str]
    default_split: str = "val"  # the split with answers that its numbers are usually reported on


CEVAL_STYLE = CevalStyle(
    "ceval", "C-Eval", {subject: info.category for subject, info in CEVAL_SUBJECTS.items()}
)
CEVAL_HARD_STYLE = CevalStyle("ceval-hard", "C-Eval", CEVAL_STYLE.categories)


def ceval_question(
    record: Mapping[str, object], subject: str, split: str, source: Source | None, style: CevalStyle
) -> Question:
    """One C-Eval-layout row as a Question with id '{subject}/{id}'. The test split may have no answer."""
    row_id = require_id(dict(record), "id")
    category = style.categories.get(subject)
    return abcd_question(
        record, row_id=row_id, subject=subject, category=category, split=split, source=source
    )


def load_ceval(
    root: Path, split: str | None = None, *, subjects: Iterable[str] | None = None, hard: bool = False
) -> LoadResult:
    """Load one split of a C-Eval folder (or one of its files); C-Eval Hard keeps its 8 subjects."""
    style = CEVAL_HARD_STYLE if hard else CEVAL_STYLE
    return load_ceval_layout(root, split, style, subjects=_wanted_subjects(subjects, hard))


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


def _split_of_file(path: Path, split: str | None, style: CevalStyle) -> str:
    """A `<subject>_<split>.csv` file is of the split its name says."""
    named = next((s for s in CEVAL_SPLITS if path.name.endswith(f"_{s}.csv")), None)
    if named is None:
        raise DataError(f"{path}: not a {style.title} file (expected <subject>_<split>.csv, split one of "
                        f"{', '.join(CEVAL_SPLITS)})")  # fmt: skip
    if split is not None and split != named:
        raise DataError(f"{path}: this is a '{named}' file, but split '{split}' was asked")
    return named


def _wanted_subjects(subjects: Iterable[str] | None, hard: bool) -> frozenset[str] | None:
    chosen = set(subjects) if subjects else None
    if hard:
        chosen = set(CEVAL_HARD_SUBJECTS) & chosen if chosen is not None else set(CEVAL_HARD_SUBJECTS)
    return frozenset(chosen) if chosen is not None else None


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
