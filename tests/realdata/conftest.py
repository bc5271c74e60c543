"""Tests against the benchmarks' own published repositories, checked out side by side in one folder.

Set KAOSHI_REALDATA to that folder (each repository under its GitHub name: CMMLU, AGIEval, GAOKAO-Bench,
LogiQA-dataset, cflue, M3KE, FinEval, ceval, CMExam; FinEval's v1 academic data, deleted from its main
branch, as FinEval-v1/ with dev/ and val/ from the history). Without it every test here is skipped with
the reason. Nothing from those repositories is copied into kaoshi: the tests read the files in place and
run the official code from there to produce the expected prompts and scores.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REALDATA_ENV = "KAOSHI_REALDATA"


def realdata_root() -> Path | None:
    value = os.environ.get(REALDATA_ENV)
    return Path(value) if value else None


def repository(name: str) -> Path:
    """The checked-out repository `name` under KAOSHI_REALDATA, or skip the test saying what is missing."""
    root = realdata_root()
    if root is None:
        pytest.skip(f"{REALDATA_ENV} is not set (a folder of the benchmarks' published repositories)")
    path = root / name
    if not path.is_dir():
        pytest.skip(f"{path} is missing: check out the benchmark's repository there")
    return path


@contextmanager
def official_code(folder: Path) -> Iterator[None]:
    """Import the official code in `folder` for the length of a block, leaving sys.path and sys.modules as
    they were (two repositories both ship a `utils` or `evaluator` module)."""
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]
