"""The embedded SQLite store of runs and samples."""

import os
from pathlib import Path

from kaoshi.store.coverage import Coverage, run_coverage
from kaoshi.store.pairing import Pairing, pair_questions, question_fingerprint
from kaoshi.store.records import (
    GradeRecord,
    GradeStatus,
    Method,
    RunRecord,
    RunSpec,
    RunStatus,
    SampleRecord,
    SampleStatus,
)
from kaoshi.store.sqlite import Store, StoreError

DEFAULT_STORE = Path("kaoshi_runs") / "kaoshi.sqlite"


def default_store_path() -> Path:
    """$KAOSHI_STORE, else ./kaoshi_runs/kaoshi.sqlite."""
    return Path(os.environ.get("KAOSHI_STORE") or DEFAULT_STORE)


def stores_beside(path: Path) -> list[Path]:
    """Other store files in the folder of `path` (e.g. the demo's, when the default store is missing)."""
    if not path.parent.is_dir():
        return []
    return sorted(p for p in path.parent.glob("*.sqlite") if p != path)


def require_store_file(path: Path) -> Path:
    """`path` when a store file is there; else a StoreError naming the stores beside it."""
    if path.is_file():
        return path
    others = stores_beside(path)
    if others:
        named = ", ".join(str(p) for p in others)
        raise StoreError(
            f"no store at {path}; found {named} beside it: pass --store {others[0]} (or set KAOSHI_STORE)"
        )
    raise StoreError(f"no store at {path} (run 'kaoshi run' first, or pass --store PATH)")


__all__ = [
    "DEFAULT_STORE",
    "Coverage",
    "GradeRecord",
    "GradeStatus",
    "Method",
    "Pairing",
    "RunRecord",
    "RunSpec",
    "RunStatus",
    "SampleRecord",
    "SampleStatus",
    "Store",
    "StoreError",
    "default_store_path",
    "pair_questions",
    "question_fingerprint",
    "require_store_file",
    "run_coverage",
    "stores_beside",
]
