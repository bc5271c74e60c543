"""AGIEval's Chinese tasks: `data/v1/{task}.jsonl` (test only), and few-shot demos from
`data/few_shot_prompts.csv` when the folder has it. A row is read by rows.py, the demos by demos.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from kaoshi.benchmarks.agieval.demos import FEW_SHOT_FILE, read_few_shot_demos
from kaoshi.benchmarks.agieval.rows import (
    AGIEVAL_SPLIT,
    AGIEVAL_TASKS,
    ENGLISH_TASKS,
    agieval_question,
)
from kaoshi.data.collect import LoadResult, QuestionCollector
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.model import Exam, Question, Source
from kaoshi.data.quirks import QuirkLog
from kaoshi.data.rawio import iter_jsonl, read_text


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
    quirks = QuirkLog()
    for task, file in files:
        collector = _read_task(task, file, quirks)
        questions += collector.questions
        errors += collector.errors
    demo_file = next(
        (f for f in (found.folder / FEW_SHOT_FILE, found.folder.parent / FEW_SHOT_FILE) if f.is_file()), None
    )
    demos: list[Question] = []
    metadata: dict[str, Any] = {"benchmark": "agieval", "path": str(path), "split": AGIEVAL_SPLIT}
    if demo_file is not None:
        demos, demo_errors, demo_notes = read_few_shot_demos(demo_file, [task for task, _ in files], quirks)
        errors += demo_errors
        warnings += demo_notes
        metadata["few_shot_file"] = str(demo_file)
    exam = Exam("agieval", tuple(questions), tuple(demos), metadata)
    return LoadResult(exam, tuple(errors), (), (*warnings, *quirks.warnings()))


def _names(found: TaskFiles) -> str:
    return ", ".join(task for task, _ in found.files)


def _read_task(task: str, path: Path, quirks: QuirkLog) -> QuestionCollector:
    collector = QuestionCollector(str(path))
    for index, item in enumerate(iter_jsonl(path, read_text(path))):
        if isinstance(item, RowError):
            collector.error(item)
            continue
        line, record = item
        # Rows have no ids: the id is the row's position, as AGIEval numbers its outputs.
        parse = partial(
            agieval_question, record, task, f"{task}/{index}", AGIEVAL_SPLIT, Source(str(path), line), quirks
        )
        collector.add(line, parse)
    return collector
