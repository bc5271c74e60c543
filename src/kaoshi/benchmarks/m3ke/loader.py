"""M3KE: data/{dev,test}/{Subject}-{Cluster}-{Level}.jsonl, one JSON object a line with id, question, A, B,
C, D and answer (a letter). 71 tasks; dev has 5 questions per task, and test's answers are "" (the labels
are withheld), so only dev can be scored here. The cluster of a task is the one
`subject_cluster.mapping.json` (beside data/) gives, else the file name's; the level is the question's
group. A file under another published name of a task (`TASK_ALIASES`) is that task's: its questions, its
dev exemplars and its cluster. The repo's README.md is UTF-16: it is never read."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import partial
from pathlib import Path

from kaoshi.benchmarks.common.abcd import AbcdColumns, abcd_question, abcd_quirks
from kaoshi.benchmarks.m3ke.tasks import (
    CLUSTER_OF_FILE_PART,
    M3KE_TASKS,
    MAPPING_FILE,
    file_names_of_task,
    task_of_file,
    task_parts,
)
from kaoshi.data.collect import LoadResult, QuestionCollector, require_id
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.model import Exam, Question, Source
from kaoshi.data.rawio import iter_jsonl, present, read_text
from kaoshi.data.split_folders import (
    exemplar_files,
    files_and_pool,
    locate_split_files,
    note_empty_file,
    select_subjects,
)

M3KE_SPLITS = ("dev", "test")
M3KE_DEFAULT_SPLIT = "dev"  # the split with answers
M3KE_COLUMNS = AbcdColumns(explanation=None, empty_options=True)
# One file name cuts its level short; the group is the level as the other files write it.
_LEVEL_SPELLING = {"High schoo": "High school"}


def m3ke_question(
    record: object, task: str, cluster: str | None, level: str | None, split: str, source: Source
) -> Question:
    """One M3KE row as a Question with id '{task}/{id}'."""
    if not isinstance(record, dict):
        raise FieldError(None, f"expected a JSON object, got {type(record).__name__}")
    return abcd_question(
        record,
        row_id=require_id(record, "id"),
        subject=task,
        category=cluster,
        split=split,
        source=source,
        columns=M3KE_COLUMNS,
        group=level,
    )


def is_m3ke_file(path: Path) -> bool:
    """A `.jsonl` file named `{Subject}-{Cluster}-{Level}` with one of M3KE's clusters."""
    parts = task_parts(path.stem)
    return path.suffix == ".jsonl" and parts is not None and parts[1] in CLUSTER_OF_FILE_PART


def load_m3ke(path: Path, split: str | None = None, *, subjects: Iterable[str] | None = None) -> LoadResult:
    """One split of an M3KE copy: the repo root, its data/ folder, or one task file (a file in data/dev or
    data/test is of that split). The dev split, unless it is evaluated, is the few-shot pool."""
    located = locate_split_files(
        path, split, splits=M3KE_SPLITS, default_split=M3KE_DEFAULT_SPLIT, suffix=".jsonl", title="M3KE"
    )
    clusters = read_cluster_mapping(located.data)
    wanted = frozenset(task_of_file(subject) for subject in subjects) if subjects else None
    errors: list[RowError] = []
    warnings: list[str] = []
    folder, by_name, by_name_pool = files_and_pool(located, lambda split: ".jsonl")
    files, pool = _by_task(by_name, warnings), _by_task(by_name_pool, warnings)
    dev = located.data / "dev"
    if located.only is not None and located.split != "dev":
        pool = _dev_files(dev, files)  # the task's dev file may be published under its other name
    questions = _read(folder, files, located.split, wanted, clusters, errors, warnings)
    chosen = exemplar_files(dev, pool, (q.subject for q in questions), warnings)
    fewshot = _read(dev, chosen, "dev", None, clusters, errors, warnings)
    warnings.extend(abcd_quirks((*questions, *fewshot)))
    unlabelled = sum(not q.has_answer for q in questions)
    if unlabelled:
        warnings.append(
            f"M3KE's {located.split} labels are withheld: {unlabelled} question(s) have no answer, so "
            "they are answered but not graded (kaoshi export m3ke-answers writes the answers); --split dev "
            "is scored"
        )
    metadata = {"benchmark": "m3ke", "path": str(path), "split": located.split}
    return LoadResult(
        Exam("m3ke", tuple(questions), tuple(fewshot), metadata), tuple(errors), (), tuple(warnings)
    )


def _by_task(files: Mapping[str, Path], warnings: list[str]) -> dict[str, Path]:
    """Data files (by file name) by the task they hold; of two files of one task, the one under the
    task's own name is read and the other is a warning."""
    tasks: dict[str, Path] = {}
    for name, path in sorted(files.items(), key=lambda item: task_of_file(item[0]) != item[0]):
        task = task_of_file(name)
        if task in tasks:
            warnings.append(f"{path}: holds task '{task}' too; {tasks[task].name} is read instead")
            continue
        tasks[task] = path
    return tasks


def _dev_files(dev: Path, tasks: Iterable[str]) -> dict[str, Path]:
    """The dev file of each task, under any of its published names."""
    found: dict[str, Path] = {}
    for task in tasks:
        named = (dev / f"{name}.jsonl" for name in file_names_of_task(task))
        file = next((path for path in named if present(path)), None)
        if file is not None:
            found[task] = file
    return found


def read_cluster_mapping(data: Path) -> dict[str, str] | None:
    """Task -> cluster from `subject_cluster.mapping.json` ({cluster: [task, ...]}) in the data folder or
    the folder above it (the repo root); None when there is none."""
    for folder in (data, data.parent):
        file = folder / MAPPING_FILE
        if present(file):
            return _parse_mapping(file)
    return None


def _parse_mapping(file: Path) -> dict[str, str]:
    try:
        mapping = json.loads(read_text(file))
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{file}: not valid JSON ({exc})") from None
    if not isinstance(mapping, dict) or not all(
        isinstance(tasks, list) and all(isinstance(task, str) for task in tasks) for tasks in mapping.values()
    ):
        raise DataError(f"{file}: expected {{cluster: [task, ...]}}")
    return {task: cluster for cluster, tasks in mapping.items() for task in tasks}


def _cluster_and_level(task: str, clusters: Mapping[str, str] | None) -> tuple[str | None, str | None]:
    parts = task_parts(task)
    level = _LEVEL_SPELLING.get(parts[2], parts[2]) if parts else None
    if clusters is not None and task in clusters:
        return clusters[task], level
    if parts is None:
        return None, None
    return CLUSTER_OF_FILE_PART.get(parts[1], parts[1]), level


def _read(
    folder: Path,
    files: Mapping[str, Path],
    split: str,
    wanted: frozenset[str] | None,
    clusters: Mapping[str, str] | None,
    errors: list[RowError],
    warnings: list[str],
) -> list[Question]:
    questions: list[Question] = []
    for task, path in select_subjects(folder, files, wanted, warnings):
        cluster, level = _cluster_and_level(task, clusters)
        if task not in M3KE_TASKS:
            where = f"in cluster '{cluster}'" if cluster else "with no cluster"
            warnings.append(f"{path}: '{task}' is not an M3KE task; loaded {where}")
        collector = QuestionCollector(str(path))
        for item in iter_jsonl(path, read_text(path)):
            if isinstance(item, RowError):
                collector.error(item)
                continue
            line, record = item
            parse = partial(m3ke_question, record, task, cluster, level, split, Source(str(path), line))
            collector.add(line, parse)
        note_empty_file(path, task, collector, warnings)
        questions.extend(collector.questions)
        errors.extend(collector.errors)
    return questions
