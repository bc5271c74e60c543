"""CMExam (Chinese medical licensing exam): `data/train.csv`, `val.csv`, `test_with_annotations.csv`.

Columns: `Question`, `Options` (one cell, one option per line: `A 阿司匹林`), `Answer` (letters; `ABCE` is a
multi-answer question), `Explanation`; the test file adds five annotations. How they are kept:

- `Medical Discipline` is the question's subject (the leaderboard has a column per discipline);
- `Clinical Department` is its domain (`kaoshi report` groups by it) — chosen over `Area of Competency`
  because a department names the part of medicine a question is from, as a domain does elsewhere;
- `Disease Group`, `Area of Competency` and `Difficulty level` are kept as read (Question.verbatim);
- none of the five is required: train.csv and val.csv have none of them.

CMExam has no id column: a question's id is `{split}-{n}`, n the record's position among the file's
records (1: the first after the header; `pandas.read_csv` numbers the same records from 0). The number
counts every record the file holds, bad ones too, so leaving out a bad row renumbers nothing.

Five options (A-E) per question is what the paper describes but was not seen in the files, so 2 to 8
lettered lines are read, and a line without a letter, a repeated letter or one out of order is an error.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

from kaoshi.data.answers import parse_option_letters, require_among_options
from kaoshi.data.collect import LoadResult, QuestionCollector, optional_text, require_text
from kaoshi.data.csvrows import CsvRecord, iter_csv_records, read_csv_header
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.model import Exam, Question, QuestionType, Source
from kaoshi.data.options import normalize_letter

CMEXAM_FILES = {"train": "train.csv", "val": "val.csv", "test": "test_with_annotations.csv"}
CMEXAM_SPLIT = "test"
REQUIRED_COLUMNS = ("Question", "Options", "Answer")
EXPLANATION = "Explanation"
SUBJECT_COLUMN = "Medical Discipline"
DOMAIN_COLUMN = "Clinical Department"
ANNOTATIONS = ("Disease Group", "Area of Competency", DOMAIN_COLUMN, SUBJECT_COLUMN, "Difficulty level")
MIN_OPTIONS, MAX_OPTIONS = 2, 8
# A letter, then a separator: whitespace, '.', '．', '、', ':', '：', ')' or '）', or straight into
# Chinese text ('A阿司匹林'). 'ABO血型' has no separator after its A: not a lettered line.
_OPTION_LINE = re.compile(
    r"^[ \t\u3000]*([A-ZＡ-Ｚ])(?:[ \t\u3000]*[.．、:：)）]|[ \t\u3000]|(?=[^\x00-\x7f]))[ \t\u3000]*(.*)$"
)


def parse_cmexam_options(cell: str) -> tuple[tuple[str, str], ...]:
    """The options of an `Options` cell, one per non-blank line, lettered A, B, C, … in order."""
    options: list[tuple[str, str]] = []
    for number, line in enumerate(cell.split("\n"), start=1):
        if not line.strip():
            continue
        match = _OPTION_LINE.match(line)
        if match is None:
            raise FieldError("Options", f"line {number} has no option letter (expected 'A text'): {line!r}")
        letter = normalize_letter(match.group(1))
        expected = chr(ord("A") + len(options))
        if letter != expected:
            seen = [known for known, _ in options]
            problem = "repeats" if letter in seen else "is out of order:"
            raise FieldError(
                "Options", f"line {number} {problem} letter {letter} (expected {expected}): {line!r}"
            )
        text = match.group(2).strip()
        if not text:
            raise FieldError("Options", f"option {letter} is empty")
        options.append((letter, text))
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise FieldError(
            "Options", f"{len(options)} option(s); expected {MIN_OPTIONS} to {MAX_OPTIONS} lines 'A text'"
        )
    return tuple(options)


def cmexam_question(record: CsvRecord, split: str, file: str) -> Question:
    """One CMExam row as a Question with id '{split}-{n}': single choice when the answer is one letter,
    multiple choice when it is several."""
    cells = {name: value for name, value in record.cells.items() if value is not None}
    fields: dict[str, object] = dict(cells)
    stem = require_text(fields, "Question")
    options = parse_cmexam_options(require_text(fields, "Options"))
    raw_answer = require_text(fields, "Answer")
    try:
        answer = parse_option_letters(raw_answer)
    except FieldError as exc:  # named as CMExam's column is
        raise FieldError("Answer", exc.reason) from None
    require_among_options(answer, options, raw_answer, "Answer")
    explanation = optional_text(fields, EXPLANATION)
    return Question(
        id=f"{split}-{record.number}",
        type=QuestionType.SINGLE if len(answer) == 1 else QuestionType.MULTI,
        stem=stem.strip(),
        options=options,
        answer=answer,
        explanation=explanation.strip(),
        subject=cells.get(SUBJECT_COLUMN, "").strip() or None,
        domain=cells.get(DOMAIN_COLUMN, "").strip() or None,
        split=split,
        source=Source(file, record.line),
        verbatim=tuple(
            (name, cells[name]) for name in (*REQUIRED_COLUMNS, EXPLANATION, *ANNOTATIONS) if name in cells
        ),
    )


def locate_cmexam(path: Path, split: str | None) -> tuple[Path, str]:
    """The CSV file to read and its split: `path` is the repository, its data/ folder or one CSV file
    (whose name says its split; another name is read as the requested split, else the test split)."""
    if split is not None and split not in CMEXAM_FILES:
        raise DataError(f"CMExam split must be one of {', '.join(CMEXAM_FILES)}, got {split!r}")
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.is_file():
        named = next((s for s, name in CMEXAM_FILES.items() if name == path.name), None)
        if split is not None and named is not None and named != split:
            raise DataError(f"{path}: {path.name} holds CMExam's {named} split, not {split}")
        return path, named or split or CMEXAM_SPLIT
    chosen = split or CMEXAM_SPLIT
    for folder in (path / "data", path):
        candidate = folder / CMEXAM_FILES[chosen]
        if candidate.is_file():
            return candidate, chosen
    raise DataError(
        f"{path}: no {CMEXAM_FILES[chosen]} here or in {path / 'data'} "
        f"(CMExam's files: data/{', data/'.join(CMEXAM_FILES.values())})"
    )


def load_cmexam(path: Path, split: str | None = None) -> LoadResult:
    """One split of CMExam from the repository, its data/ folder, or one of its CSV files."""
    file_path, chosen = locate_cmexam(path, split)
    file = str(file_path)
    collector = QuestionCollector(file)
    for item in iter_csv_records(file_path, REQUIRED_COLUMNS):
        if isinstance(item, RowError):
            collector.error(item)
            continue
        collector.add(item.line, partial(cmexam_question, item, chosen, file))
    exam = Exam(
        "cmexam", tuple(collector.questions), metadata={"benchmark": "cmexam", "path": file, "split": chosen}
    )
    return LoadResult(exam, tuple(collector.errors))


def holds_cmexam(path: Path) -> bool:
    """A CSV file whose header has CMExam's columns, or a folder (the repository or its data/) holding
    one of CMExam's files."""
    if path.is_file():
        header = read_csv_header(path) if path.suffix.lower() == ".csv" else None
        return header is not None and set(REQUIRED_COLUMNS) <= set(header)
    if not path.is_dir():
        return False
    files = (folder / name for folder in (path / "data", path) for name in CMEXAM_FILES.values())
    return any(candidate.is_file() and holds_cmexam(candidate) for candidate in files)
