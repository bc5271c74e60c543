"""AGIEval's few-shot demos: `data/few_shot_prompts.csv`, each task's solved examples as Python dict
literals (read with `ast.literal_eval`, never eval) and their explanations.

The layout as AGIEval's src/dataset_loader.py (`combine_prompt`) reads it with pandas: a header row of
task names as columns (its first cell empty), the records 1, 3, 5, 7, 9 holding the demos as Python dict
literals and the records 2, 4, 6, 8, 10 their explanations; a cell may span several lines. Seen in the
code and in data/few_shot_prompts.csv (rows 'sample 1', …, alternating with the explanation rows).
pandas' `skiprows` counts records, not physical lines, when a cell spans lines (checked with pandas 3.1 on
a file written here); so does kaoshi. Blank lines are skipped, as pandas skips them.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from kaoshi.benchmarks.agieval.rows import agieval_question
from kaoshi.data.collect import QuestionCollector
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.limits import MAX_FIELD_CHARS
from kaoshi.data.model import Question, Source
from kaoshi.data.quirks import QuirkLog
from kaoshi.data.rawio import read_text

FEW_SHOT_FILE = "few_shot_prompts.csv"
DEMO_ROWS = 5


def read_few_shot_demos(
    path: Path, tasks: Sequence[str], quirks: QuirkLog | None = None
) -> tuple[list[Question], list[RowError], list[str]]:
    """Each task's demos (split 'dev', ids '{task}/demo-{n}'), the rows that do not fit, and notes; the
    published layout's quirks a demo has are noted in `quirks`."""
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
            collector.add(line, partial(_demo, cell, task, number, explanation, Source(file, line), quirks))
    return collector.questions, collector.errors, notes


def _demo(
    cell: str, task: str, number: int, explanation: str, source: Source, quirks: QuirkLog | None
) -> Question:
    try:
        # A literal, never eval: the file is data.
        record = ast.literal_eval(cell)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise FieldError(task, f"demo {number} is not a Python dict literal ({type(exc).__name__})") from None
    if not isinstance(record, dict):
        raise FieldError(task, f"demo {number} is a {type(record).__name__}, not a dict")
    try:
        demo = agieval_question(record, task, f"{task}/demo-{number}", "dev", source, quirks)
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
