"""CMMLU: data/{dev,test}/{subject}.csv with the header `,Question,A,B,C,D,Answer`. The first column is the
row index pandas wrote (its header cell is empty), which is the question's id; dev has 5 questions per
subject, the few-shot pool."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path

from kaoshi.benchmarks.cmmlu.subjects import CMMLU_SUBJECTS
from kaoshi.benchmarks.common.abcd import ABCD, AbcdColumns, abcd_question
from kaoshi.data.collect import LoadResult, QuestionCollector
from kaoshi.data.csvrows import CsvRecord, iter_csv_records, read_csv_header
from kaoshi.data.errors import FieldError, RowError
from kaoshi.data.model import Exam, Question, Source
from kaoshi.data.split_folders import (
    exemplar_files,
    files_and_pool,
    locate_split_files,
    note_empty_file,
    select_subjects,
)

CMMLU_SPLITS = ("dev", "test")
CMMLU_DEFAULT_SPLIT = "test"  # both splits have answers; test is the benchmark, dev the exemplars
INDEX_COLUMN = ""  # the header's first cell: pandas' row index has no name
CMMLU_COLUMNS = AbcdColumns(question="Question", answer="Answer", explanation=None)
CMMLU_HEADER = (INDEX_COLUMN, "Question", *ABCD, "Answer")
_REQUIRED = CMMLU_HEADER[1:]
ROW_INDEX_FIELD = "(row index)"  # how errors name the unnamed first column


def cmmlu_question(record: CsvRecord, subject: str, split: str, file: str) -> Question:
    """One CMMLU row as a Question with id '{subject}/{row index}'."""
    cells = record.cells
    missing = sum(value is None for value in cells.values())
    if missing:
        present = len(cells) - missing
        raise FieldError(None, f"row has {present} field(s), the header {len(cells)}")
    info = CMMLU_SUBJECTS.get(subject)
    return abcd_question(
        cells,
        row_id=_row_id(record),
        subject=subject,
        category=info.category if info else None,
        split=split,
        source=Source(file, record.line),
        columns=CMMLU_COLUMNS,
        test_withheld=False,  # CMMLU publishes every answer
    )


def _row_id(record: CsvRecord) -> str:
    if INDEX_COLUMN not in record.cells:
        # A file saved without the index column: number the rows as pandas does, from 0.
        return str(record.number - 1)
    value = (record.cells[INDEX_COLUMN] or "").strip()
    if not value:
        raise FieldError(ROW_INDEX_FIELD, "the first column (the row index, the question's id) is empty")
    return value


def is_cmmlu_file(path: Path) -> bool:
    """A CSV file whose header is CMMLU's."""
    return path.suffix == ".csv" and tuple(read_csv_header(path) or ()) == CMMLU_HEADER


def load_cmmlu(path: Path, split: str | None = None, *, subjects: Iterable[str] | None = None) -> LoadResult:
    """One split of a CMMLU copy: the repo root, its data/ folder, or one subject's CSV file (a file in
    data/dev or data/test is of that split). The dev split, unless it is evaluated, is the few-shot pool."""
    located = locate_split_files(
        path, split, splits=CMMLU_SPLITS, default_split=CMMLU_DEFAULT_SPLIT, suffix=".csv", title="CMMLU"
    )
    wanted = frozenset(subjects) if subjects else None
    errors: list[RowError] = []
    warnings: list[str] = []
    folder, files, pool = files_and_pool(located, lambda split: ".csv")
    questions = _read(folder, files, located.split, wanted, errors, warnings)
    dev = located.data / "dev"
    chosen = exemplar_files(dev, pool, (q.subject for q in questions), warnings)
    fewshot = _read(dev, chosen, "dev", None, errors, warnings)
    metadata = {"benchmark": "cmmlu", "path": str(path), "split": located.split}
    return LoadResult(
        Exam("cmmlu", tuple(questions), tuple(fewshot), metadata), tuple(errors), (), tuple(warnings)
    )


def _read(
    folder: Path,
    files: Mapping[str, Path],
    split: str,
    wanted: frozenset[str] | None,
    errors: list[RowError],
    warnings: list[str],
) -> list[Question]:
    questions: list[Question] = []
    for subject, path in select_subjects(folder, files, wanted, warnings):
        if subject not in CMMLU_SUBJECTS:
            warnings.append(f"{path}: '{subject}' is not a CMMLU subject; loaded with no category")
        collector = QuestionCollector(str(path))
        for record in iter_csv_records(path, _REQUIRED):
            if isinstance(record, RowError):
                collector.error(record)
                continue
            collector.add(record.line, partial(cmmlu_question, record, subject, split, str(path)))
        note_empty_file(path, subject, collector, warnings)
        questions.extend(collector.questions)
        errors.extend(collector.errors)
    return questions
