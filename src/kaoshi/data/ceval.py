"""C-Eval: a directory of {split}/{subject}_{split}.csv files (dev / val / test)."""

from __future__ import annotations

import csv
import difflib
import io
from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path

from kaoshi.data.answers import parse_letters
from kaoshi.data.ceval_subjects import CEVAL_HARD_SUBJECTS, CEVAL_SUBJECTS
from kaoshi.data.collect import LoadResult, QuestionCollector, optional_text, require_id, require_text
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.hub import fetch
from kaoshi.data.limits import MAX_FIELD_CHARS
from kaoshi.data.model import Exam, Question, QuestionType, Source
from kaoshi.data.rawio import read_text

CEVAL_SPLITS = ("dev", "val", "test")
CEVAL_OPTION_LETTERS = ("A", "B", "C", "D")
_REQUIRED_COLUMNS = ("id", "question", *CEVAL_OPTION_LETTERS)


def ceval_question(
    record: Mapping[str, object], subject: str, split: str, file: str, line: int | None
) -> Question:
    """One C-Eval row as a Question with id '{subject}/{id}'. The test split may have no answer."""
    row_id = require_id(dict(record), "id")
    options = tuple((letter, require_text(dict(record), letter).strip()) for letter in CEVAL_OPTION_LETTERS)
    raw_answer = record.get("answer")
    answer: frozenset[str] | None = None
    if raw_answer is not None and str(raw_answer).strip():
        answer = parse_letters(str(raw_answer), QuestionType.SINGLE)
        if not answer <= set(CEVAL_OPTION_LETTERS):
            raise FieldError("answer", f"answer {raw_answer!r} is not one of A, B, C, D")
    elif split != "test":
        raise FieldError("answer", "missing answer (only the test split may omit it)")
    info = CEVAL_SUBJECTS.get(subject)
    return Question(
        id=f"{subject}/{row_id}",
        type=QuestionType.SINGLE,
        stem=require_text(dict(record), "question").strip(),
        options=options,
        answer=answer,
        explanation=optional_text(dict(record), "explanation").strip(),
        subject=subject,
        category=info.category if info else None,
        split=split,
        source=Source(file, line) if line is not None else None,
        verbatim=(
            ("question", require_text(dict(record), "question")),
            *((letter, require_text(dict(record), letter)) for letter in CEVAL_OPTION_LETTERS),
            ("explanation", optional_text(dict(record), "explanation")),
            ("answer", "" if raw_answer is None else str(raw_answer)),
        ),
    )


def load_ceval(
    root: Path, split: str = "val", *, subjects: Iterable[str] | None = None, hard: bool = False
) -> LoadResult:
    """Load one split of a C-Eval directory; the dev split, when present, becomes the few-shot pool."""
    if split not in CEVAL_SPLITS:
        raise DataError(f"C-Eval split must be one of {', '.join(CEVAL_SPLITS)}, got {split!r}")
    if not root.exists():
        raise DataError(f"{root}: no such file or directory")
    if not root.is_dir():
        raise DataError(f"{root}: not a directory (expected a C-Eval folder with dev/ val/ test/)")
    wanted = _wanted_subjects(subjects, hard)
    errors: list[RowError] = []
    warnings: list[str] = []
    questions = _load_split(root, split, wanted, errors, warnings)
    fewshot: list[Question] = []
    if split != "dev" and (root / "dev").is_dir():
        fewshot = _load_split(root, "dev", wanted, errors, warnings)
    name = "ceval-hard" if hard else "ceval"
    exam = Exam(
        name, tuple(questions), tuple(fewshot), {"benchmark": name, "path": str(root), "split": split}
    )
    return LoadResult(exam, tuple(errors), (), tuple(warnings))


def load_ceval_hub(
    split: str, subjects: Iterable[str] | None, hub_id: str, name: str = "ceval"
) -> LoadResult:
    """One split of C-Eval from the Hugging Face hub (a dataset config per subject), the dev split as the
    few-shot pool; every subject unless `subjects` names some."""
    chosen = list(subjects) if subjects else list(CEVAL_SUBJECTS)
    questions: list[Question] = []
    fewshot: list[Question] = []
    errors: list[RowError] = []
    for subject in chosen:
        wanted = [(split, questions)] + ([("dev", fewshot)] if split != "dev" else [])
        for split_name, sink in wanted:
            rows = fetch(hub_id, name=subject, split=split_name)
            collector = QuestionCollector(f"hf://{hub_id}/{subject}/{split_name}")
            for index, record in enumerate(rows):
                parse = partial(ceval_question, dict(record), subject, split_name, collector.file, None)
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


def _load_split(
    root: Path, split: str, wanted: frozenset[str] | None, errors: list[RowError], warnings: list[str]
) -> list[Question]:
    folder = root / split
    if not folder.is_dir():
        raise DataError(f"{root}: no '{split}' folder (expected {split}/<subject>_{split}.csv files)")
    suffix = f"_{split}.csv"
    files = sorted(p for p in folder.iterdir() if p.name.endswith(suffix))
    if not files:
        raise DataError(f"{folder}: no files named <subject>{suffix}")
    questions: list[Question] = []
    found: set[str] = set()
    for path in files:
        subject = path.name[: -len(suffix)]
        if wanted is not None and subject not in wanted:
            continue
        found.add(subject)
        if subject not in CEVAL_SUBJECTS:
            warnings.append(f"{path}: '{subject}' is not a C-Eval subject; loaded with no category")
        collector = QuestionCollector(str(path))
        _read_csv(path, subject, split, collector)
        questions.extend(collector.questions)
        errors.extend(collector.errors)
    if wanted is not None and (missing := sorted(wanted - found)):
        available = sorted(path.name[: -len(suffix)] for path in files)
        message = f"{folder}: no file for subject(s) {_with_suggestions(missing, available)}"
        if not found:  # nothing to evaluate: say which names exist instead of "no valid questions"
            raise DataError(f"{message}; subjects here: {', '.join(available)}")
        warnings.append(message)
    return questions


def _with_suggestions(missing: list[str], available: list[str]) -> str:
    """'computer_netwrk (did you mean computer_network?), xyz' for subject names that have no file."""
    named = []
    for subject in missing:
        close = difflib.get_close_matches(subject, available, n=1)
        named.append(f"{subject} (did you mean {close[0]}?)" if close else subject)
    return ", ".join(named)


def _read_csv(path: Path, subject: str, split: str, collector: QuestionCollector) -> None:
    file = str(path)
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    try:
        columns = reader.fieldnames or []
    except csv.Error as exc:
        collector.error(RowError(file, reader.line_num or 1, None, _csv_failure(exc)))
        return
    missing = [c for c in _REQUIRED_COLUMNS if c not in columns]
    if missing:
        collector.error(
            RowError(file, 1, missing[0], f"missing column(s) {', '.join(missing)} in the header")
        )
        return
    repeated = sorted({c for c in columns if columns.count(c) > 1}, key=columns.index)
    if repeated:
        # csv.DictReader would keep the last of the repeated columns and silently drop the others.
        collector.error(
            RowError(file, 1, repeated[0], f"column(s) {', '.join(repeated)} repeated in the header")
        )
        return
    next_line = 2
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            # The reader cannot resynchronise after a malformed record; the rest of the file is not read.
            collector.error(RowError(file, next_line, None, _csv_failure(exc)))
            return
        start, next_line = next_line, reader.line_num + 1
        if not any((value or "").strip() for value in row.values() if isinstance(value, str)):
            continue
        if None in row:
            collector.error(RowError(file, start, None, "row has more fields than the header"))
            continue
        if all(row.get(column) == column for column in _REQUIRED_COLUMNS):
            collector.error(RowError(file, start, None, "the header row is repeated here"))
            continue
        collector.add(start, partial(ceval_question, row, subject, split, file, start))


def _csv_failure(exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return f"a field is longer than the limit of {MAX_FIELD_CHARS:,} characters"
    return f"malformed CSV: {exc}"
