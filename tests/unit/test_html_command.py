"""kaoshi html writes its file whole or not at all, reading each run's samples from the store as it writes,
and a page that agrees with itself while another process writes the run."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

import kaoshi.api.html_report as html_report
import kaoshi.report.html as html
from kaoshi.api import write_html_report
from kaoshi.cli.main import main
from kaoshi.errors import InputError
from kaoshi.results.grading import StoredSamples
from kaoshi.store import Store
from tests.support.stores import new_store, sample


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


def test_a_link_to_the_report_stays_a_link_and_the_file_keeps_its_permissions(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite", 3)
    target = tmp_path / "reports" / "r.html"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    target.chmod(0o600)
    link = tmp_path / "latest.html"
    link.symlink_to(target)
    written = write_html_report("r", link, store=store)
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text(encoding="utf-8").count('"id":"q') == 3 and written.size == target.stat().st_size
    assert target.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["r.html"]


def test_a_pipe_is_written_to(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite", 2)
    read, write = os.pipe()
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(_read_all(read)))
    reader.start()
    written = write_html_report(["r"], f"/proc/self/fd/{write}", store=store)
    os.close(write)
    reader.join(timeout=30)
    assert written.size is None and b'"id":"q1"' in received[0]


def _read_all(fd: int) -> bytes:
    with os.fdopen(fd, "rb") as pipe:
        return pipe.read()


def test_what_cannot_be_written_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    store = new_store(tmp_path / "s.sqlite", 1)
    with pytest.raises(InputError, match="folder"):
        write_html_report("r", tmp_path, store=store)
    with pytest.raises(InputError, match="no runs"):
        write_html_report([], tmp_path / "r.html", store=store)


def test_a_run_written_meanwhile_gives_a_page_that_agrees_with_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sample another process commits between the browser's two reads is in neither of them."""
    store = new_store(tmp_path / "s.sqlite", 4)
    filters = html.browser_filters

    def then_a_sample_more(runs: Any) -> Any:
        made = filters(runs)
        with Store(store) as writer:
            writer.add_sample("r", sample("late", domain="消防"))
        return made

    monkeypatch.setattr(html, "browser_filters", then_a_sample_more)
    out = tmp_path / "r.html"
    write_html_report("r", out, store=store)
    page = out.read_text(encoding="utf-8")
    assert page.count('"id":"q') == 4 and '"id":"late"' not in page and "消防" not in page
    with Store(store, read_only=True) as reader:
        assert len(reader.samples("r")) == 5  # written, and read by the next report
