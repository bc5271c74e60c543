"""Benchmarks published as one file per subject in split folders (C-Eval and FinEval's {split}/, CMMLU and
M3KE's data/{split}/): what `--data` names (the repo root, the data folder or one file) -> the folder
and split to read, and the subject filter (`--subjects`) with its suggestions. No subject is left out
unsaid: an entry named like a subject file that cannot be read (a dangling link, a FIFO, a folder) is an
error naming it, and a subject file without questions a warning."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kaoshi.data.collect import QuestionCollector
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.rawio import path_problem, present, refuse_special_path


@dataclass(frozen=True)
class SplitFiles:
    """Where to read: `data` holds the split folders; `only` is the one file `--data` named (None: every
    file of the split)."""

    data: Path
    split: str
    only: Path | None = None


def locate_split_files(
    path: Path, split: str | None, *, splits: Sequence[str], default_split: str, suffix: str, title: str
) -> SplitFiles:
    """The split folders under `path` (itself, or its `data/` folder), or the one file it names: a file
    inside a split folder is of that split; elsewhere it is of the asked (or default) split."""
    if split is not None and split not in splits:
        raise DataError(f"{title} split must be one of {', '.join(splits)}, got {split!r}")
    refuse_special_path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.is_file():
        if not path.name.endswith(suffix):
            raise DataError(f"{path}: not a {title} data file (expected a <subject>{suffix} file)")
        in_split = path.parent.name if path.parent.name in splits else None
        if split is not None and in_split is not None and split != in_split:
            raise DataError(f"{path}: this file is in the '{in_split}' folder, but split '{split}' was asked")
        chosen = split or in_split or default_split
        return SplitFiles(path.parent.parent if in_split else path.parent, chosen, path)
    for folder in (path, path / "data"):
        if any((folder / name).is_dir() for name in splits):
            return SplitFiles(folder, split or default_split)
    folders = "/ ".join(splits)
    raise DataError(
        f"{path}: no {title} data here (expected {folders}/ folders of <subject>{suffix} files, or a data/ "
        "folder holding them)"
    )


def split_folder_files(path: Path, splits: Sequence[str], suffix: str) -> Iterator[list[Path]]:
    """The files named *`suffix` (sorted) of each split folder in `path` or its data/ folder, one list a
    folder: what a benchmark's detection looks at in a folder it may hold."""
    for folder in (path, path / "data"):
        for split in splits:
            if (folder / split).is_dir():
                yield sorted((folder / split).glob(f"*{suffix}"))


def select_subjects(
    folder: Path, available: Mapping[str, Path], wanted: frozenset[str] | None, warnings: list[str]
) -> list[tuple[str, Path]]:
    """The (subject, file) pairs to read, in file name order: every subject, or the wanted ones. A wanted
    subject without a file is a warning; when none has one, a DataError naming the subjects there. A
    chosen file that cannot be read (a dangling link, a FIFO, a folder) is a DataError naming each."""
    ordered = sorted(available.items(), key=lambda item: item[1].name)
    chosen = [(subject, path) for subject, path in ordered if wanted is None or subject in wanted]
    if wanted is not None and (missing := sorted(wanted - set(available))):
        message = f"{folder}: no file for subject(s) {with_suggestions(missing, sorted(available))}"
        if not chosen:  # nothing to evaluate: say which names exist instead of "no valid questions"
            raise DataError(f"{message}; subjects here: {', '.join(sorted(available))}")
        warnings.append(message)
    unreadable = tuple(
        RowError(str(path), None, None, problem)
        for _, path in chosen
        if (problem := path_problem(path)) is not None
    )
    if unreadable:
        raise DataError(
            f"{folder}: {len(unreadable)} subject file(s) cannot be read (remove them, or choose the other "
            "subjects with --subjects)",
            unreadable,
        )
    return chosen


def note_empty_file(path: Path, subject: str, collector: QuestionCollector, warnings: list[str]) -> None:
    """A subject file that holds no row (a header at most) is a warning: its subject adds no question."""
    if not collector.questions and not collector.errors:
        warnings.append(f"{path}: no questions in this file (a header at most), so '{subject}' adds none")


def with_suggestions(missing: Sequence[str], available: Sequence[str]) -> str:
    """'computer_netwrk (did you mean computer_network?), xyz' for subject names that have no file."""
    named = []
    for subject in missing:
        close = difflib.get_close_matches(subject, available, n=1)
        named.append(f"{subject} (did you mean {close[0]}?)" if close else subject)
    return ", ".join(named)


def subject_files(data: Path, split: str, suffix: str) -> tuple[Path, dict[str, Path]]:
    """The split's folder and its files named <subject><suffix>, by subject; DataError when the folder
    or its files are missing."""
    folder = data / split
    if not folder.is_dir():
        raise DataError(f"{data}: no '{split}' folder (expected {split}/<subject>{suffix} files)")
    # Every entry so named, files or not: one that is no readable file is named when it is chosen.
    files = {p.name[: -len(suffix)]: p for p in folder.iterdir() if p.name.endswith(suffix)}
    if not files:
        raise DataError(f"{folder}: no files named <subject>{suffix}")
    return folder, files


def exemplar_files(
    dev: Path, available: Mapping[str, Path], evaluated: Iterable[str | None], warnings: list[str]
) -> dict[str, Path]:
    """The dev files of the evaluated subjects, the few-shot pool; a subject without one is a warning (it
    gets no exemplars), said only when there are dev files at all."""
    subjects = {subject for subject in evaluated if subject is not None}
    if available and (missing := sorted(subjects - set(available))):
        warnings.append(f"{dev}: no dev file, so no exemplars, for {', '.join(missing)}")
    return {subject: path for subject, path in available.items() if subject in subjects}


def files_and_pool(
    located: SplitFiles, suffix: Callable[[str], str]
) -> tuple[Path, dict[str, Path], dict[str, Path]]:
    """The folder and the files (by subject) to evaluate, and the dev files that may give exemplars (none
    when dev is evaluated). `suffix`: split -> what follows the subject in a file name ('_val.csv')."""
    dev = located.data / "dev"
    if located.only is not None:
        subject = located.only.name.removesuffix(suffix(located.split))
        dev_file = dev / f"{subject}{suffix('dev')}"
        pool = {subject: dev_file} if located.split != "dev" and present(dev_file) else {}
        return located.only.parent, {subject: located.only}, pool
    folder, files = subject_files(located.data, located.split, suffix(located.split))
    pool = (
        subject_files(located.data, "dev", suffix("dev"))[1]
        if located.split != "dev" and dev.is_dir()
        else {}
    )
    return folder, files, pool
