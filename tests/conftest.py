from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def write_jsonl(path: Path, rows: list[Any], *, newline: str = "\n", bom: bool = False) -> Path:
    text = (
        newline.join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows) + newline
    )
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite"
