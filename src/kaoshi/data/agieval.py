"""AGIEval's Chinese tasks: `data/v1/{task}.jsonl` (test only), and few-shot demos from
`data/few_shot_prompts.csv` when the folder has it.

A row: `passage` (text or null), `question`, `options` (['(A)…', '(B)…', …]), `label` ('A', or a list such as
['A', 'D']), `answer` (the cloze reference, gaokao-mathcloze), `other`. The label's form decides the type:
a letter is a single-choice question, a list a multi-answer one graded on the exact set, and a row with no
label but an answer a cloze question. A one-letter list is multi-answer too: JEC-QA's questions may have
several right options and its labels are always lists, and AGIEval's scorer (src/evaluation.py) compares
letter sets for jec-qa-kd, jec-qa-ca and gaokao-physics, so ['C'] is right only for exactly {C}. (A run's
--multi-policy partial or f1 changes the points such a question earns, never its `correct`.)
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from kaoshi.data.answers import parse_option_letters
from kaoshi.data.collect import LoadResult, QuestionCollector
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.limits import MAX_FIELD_CHARS
from kaoshi.data.model import Exam, Gold, Question, QuestionType, Source
from kaoshi.data.options import normalize_letter, split_options
from kaoshi.data.rawio import iter_jsonl, read_text

# The Chinese tasks (the exams' origin: GAOKAO English is a Chinese exam) -> source, published size.
AGIEVAL_TASKS: dict[str, tuple[str, int]] = {
    "gaokao-chinese": ("Gaokao", 246),
    "gaokao-english": ("Gaokao", 306),
    "gaokao-geography": ("Gaokao", 199),
    "gaokao-history": ("Gaokao", 235),
    "gaokao-biology": ("Gaokao", 210),
    "gaokao-chemistry": ("Gaokao", 207),
    "gaokao-physics": ("Gaokao", 200),
    "gaokao-mathqa": ("Gaokao", 351),
    "gaokao-mathcloze": ("Gaokao", 118),
    "logiqa-zh": ("LogiQA", 651),
    "jec-qa-kd": ("JEC-QA", 1000),
    "jec-qa-ca": ("JEC-QA", 1000),
}
# AGIEval's English tasks: a folder's copies are skipped with a note.
ENGLISH_TASKS = frozenset(
    (
        "lsat-ar",
        "lsat-lr",
        "lsat-rc",
        "logiqa-en",
        "sat-math",
        "sat-en",
        "sat-en-without-passage",
        "aqua-rat",
        "math",
    )
)
AGIEVAL_SPLIT = "test"
FEW_SHOT_FILE = "few_shot_prompts.csv"
OPTION_LETTERS = "ABCDEFG"  # AGIEval's prompts name the last option from these
# '(A)text', as every option string is written; full-width brackets and letters are read as well.
_OPTION_PREFIX = re.compile(r"^[ \t\u3000]*[(（][ \t]*([A-Za-zＡ-Ｚａ-ｚ])[ \t]*[)）][ \t\u3000]*")


def agieval_question(record: Any, task: str, question_id: str, split: str, source: Source | None) -> Question:
    """One AGIEval row (or few-shot demo) as a Question; FieldError on a row that does not fit."""
    if not isinstance(record, dict):
        raise FieldError(None, f"expected a JSON object, got {type(record).__name__}")
    passage = _optional_text(record, "passage")
    question = _optional_text(record, "question")
    if "question" not in record or record["question"] is None:
        raise FieldError("question", "missing required field")
    stem = f"{passage.strip()}\n{question.strip()}" if passage.strip() else question.strip()
    if not stem:
        raise FieldError("question", "is empty (and the row has no passage)")
    label, reference = record.get("label"), record.get("answer")
    verbatim = [("passage", passage), ("question", question)]
    options: tuple[tuple[str, str], ...] = ()
    if label not in (None, "", []):
        raw_options = _option_strings(record.get("options"))
        options = _parse_options(raw_options)
        qtype, gold = _parse_label(label, options)
        verbatim += [("options", json.dumps(raw_options, ensure_ascii=False)), ("label", str(label))]
    elif reference not in (None, ""):
        if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
            raise FieldError("answer", f"expected the cloze answer as text, got {reference!r}")
        # Imported here: the question kinds import this package's model.
        from kaoshi.qtypes import kind_of

        qtype, gold = QuestionType.CLOZE, kind_of(QuestionType.CLOZE).parse_gold(str(reference))
        verbatim.append(("answer", str(reference)))
    else:
        raise FieldError("label", "missing: a choice row needs 'label', a cloze row 'answer'")
    source_name, _ = AGIEVAL_TASKS.get(task, (None, 0))
    return Question(
        id=question_id,
        type=qtype,
        stem=stem,
        options=options,
        answer=gold,
        explanation=_solution(record.get("other")),
        subject=task,
        category=source_name,
        split=split,
        source=source,
        verbatim=tuple(verbatim),
    )


def _optional_text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(name, f"expected text or null, got {type(value).__name__}")
    return value


def _option_strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise FieldError("options", f"expected a list of option strings such as '(A)…', got {value!r}")
    if not all(isinstance(option, str) for option in value):
        raise FieldError("options", "every option must be text")
    return list(value)


def _parse_options(raw: list[str]) -> tuple[tuple[str, str], ...]:
    """'(A)text' strings -> (letter, text). A single string holding every option ('A. 甲\tB. 乙 …', a
    quirk AGIEval's prompt code allows for) is split as QualBench's embedded options are."""
    if len(raw) == 1:
        _, embedded = split_options(raw[0].replace("\t", "\n"))
        if len(embedded) < 2:
            raise FieldError("options", f"one option string {raw[0]!r} holds no lettered options")
        parsed = embedded
    else:
        parsed = tuple(_parse_option(position, text) for position, text in enumerate(raw))
    if len(parsed) > len(OPTION_LETTERS):
        raise FieldError("options", f"at most {len(OPTION_LETTERS)} options (A-G), got {len(parsed)}")
    if not all(text.strip() for _, text in parsed):
        empty = next(letter for letter, text in parsed if not text.strip())
        raise FieldError("options", f"option {empty} is empty")
    return tuple((letter, text.strip()) for letter, text in parsed)


def _parse_option(position: int, text: str) -> tuple[str, str]:
    expected = OPTION_LETTERS[position] if position < len(OPTION_LETTERS) else "?"
    match = _OPTION_PREFIX.match(text)
    if match is None or normalize_letter(match.group(1)) != expected:
        raise FieldError("options", f"option {position + 1} {text[:40]!r} does not start with '({expected})'")
    return expected, text[match.end() :]


def _parse_label(label: Any, options: tuple[tuple[str, str], ...]) -> tuple[QuestionType, Gold]:
    letters = "".join(letter for letter, _ in options)
    if isinstance(label, str):
        qtype = QuestionType.SINGLE
        if len(label.strip()) != 1:
            raise FieldError("label", f"label {label!r}: a text label is one letter (several: a list)")
    elif isinstance(label, list) and all(isinstance(item, str) for item in label):
        qtype = QuestionType.MULTI
    else:
        raise FieldError("label", f"expected a letter or a list of letters, got {label!r}")
    try:
        gold = parse_option_letters(label)
    except FieldError as exc:
        raise FieldError("label", exc.reason) from None
    if not gold <= set(letters):
        raise FieldError("label", f"label {label!r} names a letter that is not an option ({letters})")
    return qtype, gold


def _solution(other: Any) -> str:
    """The worked solution some rows carry in `other` (others hold only their source)."""
    if isinstance(other, dict) and isinstance(other.get("solution"), str):
        return str(other["solution"]).strip()
    return ""


@dataclass(frozen=True)
class TaskFiles:
    """The task files a --data path holds, the folder the few-shot file is looked for in, and notes."""

    files: tuple[tuple[str, Path], ...]  # (task, file) in AGIEval's task order
    folder: Path
    notes: tuple[str, ...]


def task_of(path: Path) -> str:
    """A task file's task name ('gaokao-physics' for gaokao-physics.jsonl)."""
    return path.name.removesuffix(".jsonl")


def find_task_files(path: Path) -> TaskFiles:
    """The repository root, its data/v1 folder, or one task file."""
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.is_file():
        task = task_of(path)
        if task in ENGLISH_TASKS:
            raise DataError(
                f"{path}: '{task}' is an English AGIEval task; kaoshi's agieval reads the Chinese ones"
            )
        if task not in AGIEVAL_TASKS or path.suffix != ".jsonl":
            raise DataError(
                f"{path}: not an AGIEval task file (expected <task>.jsonl, tasks: {_task_list()})"
            )
        return TaskFiles(((task, path),), path.parent, ())
    folder = path / "data" / "v1" if (path / "data" / "v1").is_dir() else path
    present = {task_of(p): p for p in folder.glob("*.jsonl") if p.is_file()}
    files = tuple((task, present[task]) for task in AGIEVAL_TASKS if task in present)
    if not files:
        raise DataError(f"{folder}: no AGIEval task files (expected <task>.jsonl for tasks: {_task_list()})")
    notes = []
    english = sorted(set(present) & ENGLISH_TASKS)
    if english:
        notes.append(f"{folder}: skipped the English AGIEval tasks {', '.join(english)}")
    other = sorted(set(present) - ENGLISH_TASKS - set(AGIEVAL_TASKS))
    if other:
        notes.append(f"{folder}: skipped {', '.join(f'{name}.jsonl' for name in other)}: not AGIEval tasks")
    return TaskFiles(files, folder, tuple(notes))


def _task_list() -> str:
    return ", ".join(AGIEVAL_TASKS)


def load_agieval(path: Path, split: str | None = None, subjects: Iterable[str] | None = None) -> LoadResult:
    """The Chinese tasks under `path` (test split), with the few-shot demos when the folder has them."""
    if split not in (None, AGIEVAL_SPLIT):
        raise DataError(f"AGIEval has a single split ('{AGIEVAL_SPLIT}'), got {split!r}")
    found = find_task_files(path)
    files = found.files
    warnings = list(found.notes)
    if subjects is not None:
        wanted = set(subjects)
        files = tuple((task, file) for task, file in files if task in wanted)
        missing = sorted(wanted - {task for task, _ in files})
        if not files:
            raise DataError(f"{path}: no file for task(s) {', '.join(missing)}; tasks here: {_names(found)}")
        if missing:
            warnings.append(f"{path}: no file for task(s) {', '.join(missing)}")
    errors: list[RowError] = []
    questions: list[Question] = []
    for task, file in files:
        collector = _read_task(task, file)
        questions += collector.questions
        errors += collector.errors
    demo_file = next(
        (f for f in (found.folder / FEW_SHOT_FILE, found.folder.parent / FEW_SHOT_FILE) if f.is_file()), None
    )
    demos: list[Question] = []
    metadata: dict[str, Any] = {"benchmark": "agieval", "path": str(path), "split": AGIEVAL_SPLIT}
    if demo_file is not None:
        demos, demo_errors, demo_notes = read_few_shot_demos(demo_file, [task for task, _ in files])
        errors += demo_errors
        warnings += demo_notes
        metadata["few_shot_file"] = str(demo_file)
    exam = Exam("agieval", tuple(questions), tuple(demos), metadata)
    return LoadResult(exam, tuple(errors), (), tuple(warnings))


def _names(found: TaskFiles) -> str:
    return ", ".join(task for task, _ in found.files)


def _read_task(task: str, path: Path) -> QuestionCollector:
    collector = QuestionCollector(str(path))
    for index, item in enumerate(iter_jsonl(path, read_text(path))):
        if isinstance(item, RowError):
            collector.error(item)
            continue
        line, record = item
        # Rows have no ids: the id is the row's position, as AGIEval numbers its outputs.
        parse = partial(
            agieval_question, record, task, f"{task}/{index}", AGIEVAL_SPLIT, Source(str(path), line)
        )
        collector.add(line, parse)
    return collector


# -- few-shot demos ----------------------------------------------------------------------------------------
# The layout as AGIEval's src/dataset_loader.py (`combine_prompt`) reads it with pandas: a header row of
# task names as columns (its first cell empty), the records 1, 3, 5, 7, 9 holding the demos as Python dict
# literals and the records 2, 4, 6, 8, 10 their explanations; a cell may span several lines. Seen in the
# code and in data/few_shot_prompts.csv (rows 'sample 1', …, alternating with the explanation rows).
# pandas' `skiprows` counts records, not physical lines, when a cell spans lines (checked with pandas 3.1 on
# a file written here); so does kaoshi. Blank lines are skipped, as pandas skips them.
DEMO_ROWS = 5


def read_few_shot_demos(path: Path, tasks: Sequence[str]) -> tuple[list[Question], list[RowError], list[str]]:
    """Each task's demos (split 'dev', ids '{task}/demo-{n}'), the rows that do not fit, and notes."""
    file = str(path)
    try:
        records = _csv_records(path)
    except DataError as exc:
        return [], list(exc.errors), []
    if not records:
        return [], [RowError(file, 1, None, "empty file (expected a header row of task names)")], []
    _, header = records[0]
    columns = {name.strip(): index for index, name in enumerate(header) if index > 0}
    missing = [task for task in tasks if task not in columns]
    notes = [f"{file}: no column for task(s) {', '.join(missing)}; they get no demos"] if missing else []
    collector = QuestionCollector(file)
    for task in (t for t in tasks if t in columns):
        for number in range(1, DEMO_ROWS + 1):
            context_at, explanation_at = 2 * number - 1, 2 * number
            if context_at >= len(records):
                break
            line, row = records[context_at]
            cell = row[columns[task]] if columns[task] < len(row) else ""
            if not cell.strip():
                continue
            explanation = ""
            if explanation_at < len(records):
                _, explanation_row = records[explanation_at]
                explanation = explanation_row[columns[task]] if columns[task] < len(explanation_row) else ""
            collector.add(line, partial(_demo, cell, task, number, explanation, file, line))
    return collector.questions, collector.errors, notes


def _demo(cell: str, task: str, number: int, explanation: str, file: str, line: int) -> Question:
    try:
        # A literal, never eval: the file is data.
        record = ast.literal_eval(cell)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise FieldError(task, f"demo {number} is not a Python dict literal ({type(exc).__name__})") from None
    if not isinstance(record, dict):
        raise FieldError(task, f"demo {number} is a {type(record).__name__}, not a dict")
    try:
        demo = agieval_question(record, task, f"{task}/demo-{number}", "dev", Source(file, line))
    except FieldError as exc:
        raise FieldError(
            f"{task}: {exc.field}" if exc.field else task, f"demo {number}: {exc.reason}"
        ) from None
    # The upstream code joins the explanation's paragraphs: '\n\n' -> '\n'.
    explanation = re.sub("\n\n", "\n", explanation).strip()
    return replace(demo, explanation=explanation or demo.explanation)


def _csv_records(path: Path) -> list[tuple[int, list[str]]]:
    """(first line, cells) of each CSV record; a malformed record is a DataError naming its line."""
    # strict: a quote never closed is an error, not a cell that swallows the rest of the file
    reader = csv.reader(io.StringIO(read_text(path), newline=""), strict=True)
    records: list[tuple[int, list[str]]] = []
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return records
        except csv.Error as exc:
            reason = f"malformed CSV: {exc}"
            if "field larger than field limit" in reason:
                reason = f"a cell is longer than the limit of {MAX_FIELD_CHARS:,} characters"
            raise DataError(f"{path}: malformed CSV", (RowError(str(path), start, None, reason),)) from None
        if any(cell.strip() for cell in row):  # pandas skips blank lines too
            records.append((start, row))
        start = reader.line_num + 1
