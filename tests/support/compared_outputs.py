"""What each reader of a comparison shows (`kaoshi report A B`, `kaoshi compare`, the viewer's compare page),
as text, for the tests that hold what is read from the store's kept numbers equal to what is counted from
the rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.api import studies
from kaoshi.api.comparing import compare_stored
from kaoshi.api.studies import compare
from kaoshi.errors import InputError
from kaoshi.report.compare import render_comparison
from kaoshi.report.paired import paired_table
from kaoshi.report.tables import render_tables
from kaoshi.view import create_app
from kaoshi.view.urls import compare_url
from tests.support.mixed_runs import nothing_kept

LOCAL = "http://127.0.0.1:8000"


def reported(path: Path, names: list[str], *, keep: bool = True, grader: str | None = None) -> str:
    """`kaoshi report A B C` as JSON, as a table and as markdown (the comparison the CLI keeps)."""
    compared = compare_stored(names, store=path, keep=keep, grader=grader)
    return "".join(render_comparison(compared, fmt, resamples=500) for fmt in ("json", "table", "md"))


def compared(path: Path, names: list[str], *, keep: bool = True) -> str:
    """`kaoshi compare A B C --by` every grouping, as JSON and as tables (or the error it gives)."""
    try:
        result = compare(names, store=path, keep=keep, by=studies.COMPARE_KEYS, resamples=500)
    except InputError as exc:
        return f"error: {exc}"
    tables = [paired_table(key, key, result.runs, rows) for key, rows in result.groups.items()]
    return json.dumps(result.to_json(), ensure_ascii=False, indent=1, default=str) + render_tables(
        tables, "md"
    )


def pages(path: Path, names: list[str]) -> str:
    """The viewer's compare page, each page of its differences (the viewer never writes); the test is
    skipped without the view extra, which installs starlette."""
    testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
    shown = []
    with testclient.TestClient(create_app(path), base_url=LOCAL) as client:
        for page in (1, 2):
            answer = client.get(compare_url(names, page))
            assert answer.status_code == 200, answer.text
            shown.append(answer.text)
    return "".join(shown)


def everything(path: Path, names: list[str], *, keep: bool = True) -> str:
    """What every reader of a comparison shows: the report and compare (keeping, unless not `keep`), then
    the viewer's pages (which read what those kept)."""
    return reported(path, names, keep=keep) + compared(path, names, keep=keep) + pages(path, names)


def counted_again(path: Path, names: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """Everything counted from the rows, as if nothing were kept (and nothing kept by this read)."""
    with nothing_kept(monkeypatch):
        return everything(path, names, keep=False)
