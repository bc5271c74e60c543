"""The embedded SQLite store of runs and samples."""

import os
from pathlib import Path

from kaoshi.store.records import GradeRecord, RunRecord, RunSpec, SampleRecord
from kaoshi.store.sqlite import Store, StoreError

DEFAULT_STORE = Path("kaoshi_runs") / "kaoshi.sqlite"


def default_store_path() -> Path:
    """$KAOSHI_STORE, else ./kaoshi_runs/kaoshi.sqlite."""
    return Path(os.environ.get("KAOSHI_STORE") or DEFAULT_STORE)


__all__ = [
    "DEFAULT_STORE",
    "GradeRecord",
    "RunRecord",
    "RunSpec",
    "SampleRecord",
    "Store",
    "StoreError",
    "default_store_path",
]
