"""kaoshi html writes its file whole or not at all, reading each run's samples from the store as it writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import kaoshi.api.html_report as html_report
from kaoshi.cli.main import main
from kaoshi.results.grading import StoredSamples
from tests.support.stores import new_store


def test_the_report_streams_the_samples_it_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = new_store(tmp_path / "s.sqlite", 30)
    given: list[Any] = []
    write = html_report.write_html

    def watched(out: Any, runs: Any, *args: Any, **kw: Any) -> None:
        given.extend(runs)
        given.append(len(list(runs[0].samples)))
        write(out, runs, *args, **kw)

    monkeypatch.setattr(html_report, "write_html", watched)
    out = tmp_path / "r.html"
    assert main(["html", "r", "-o", str(out), "--store", str(store)]) == 0
    run, read = given
    assert isinstance(run.samples, StoredSamples) and isinstance(run.groups, StoredSamples)
    assert run.groups.light and not run.samples.light
    assert read == 30 and out.read_text(encoding="utf-8").count('"id":"q') == 30


def test_a_report_that_fails_while_written_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = new_store(tmp_path / "s.sqlite", 3)
    out = tmp_path / "r.html"
    out.write_text("the report from before", encoding="utf-8")

    def failing(out: Any, *args: Any, **kw: Any) -> None:
        out.write("<!doctype html> half a page")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(html_report, "write_html", failing)
    assert main(["html", "r", "-o", str(out), "--store", str(store)]) != 0
    assert out.read_text(encoding="utf-8") == "the report from before"
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("s.sqlite")] == ["r.html"]
