"""The self-contained HTML report of stored runs (kaoshi html): summary tables, plots and a question browser
in one file, each run's samples read from the store as the file is written, never held."""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from kaoshi.api.grading_agreement import agreement
from kaoshi.api.summary import StoreLike, open_store, read_summary
from kaoshi.benchmarks import english_names
from kaoshi.errors import InputError
from kaoshi.report.html import Figure, Page, ReportRun, write_html
from kaoshi.report.plot import PlotError, draw, natural_grouping, png_bytes
from kaoshi.results.aggregate import RunSummary
from kaoshi.results.grading import StoredSamples, chosen_grades
from kaoshi.store.sqlite import Store


@dataclass(frozen=True)
class HtmlReport:
    """A report written: its file and size, its plots, and why any plot is missing (one note each)."""

    path: Path
    size: int | None  # bytes (None: written to a device or pipe)
    plots: int
    notes: tuple[str, ...]


def write_html_report(
    runs: str | Sequence[str],
    output: str | Path,
    *,
    store: StoreLike = None,
    grader: str | None = None,
    by: str | None = None,
    title: str = "kaoshi report",
    with_prompts: bool = True,
    human: str | Path | None = None,
    store_label: str = "",
) -> HtmlReport:
    """Write the HTML report of `runs` (one name or several) to `output`: their summaries (as `kaoshi
    report` counts them, with `grader`'s grades of open answers), the bar chart and radar by `by` (default:
    the first grouping the runs carry), and every sample in the question browser (without prompts unless
    `with_prompts`); `human`: a CSV of human scores of the first run's open answers, for every grader's
    agreement with them. Each run's samples are read from the store as the file is written, twice (once
    for the browser's filters, once for its questions), never held: a run of 100,000 samples in about
    125 MB. Every read sees the store as the first one does (Store.snapshot), so a run being written gives
    a page that agrees with itself. A file is written beside `output` and moved over it whole (a report
    that fails part-way leaves the old file, and its permissions stay); a device or pipe is written to."""
    names = [runs] if isinstance(runs, str) else list(runs)
    if not names:
        raise InputError("no runs to report: name one or more")
    path = Path(output)
    if path.is_dir():
        raise InputError(f"{path} is a folder: name the .html file to write")
    with open_store(store, read_only=True) as opened, opened.snapshot():
        shown = [_report_run(opened, name, grader) for name in names]
        agreed = agreement(names[0], human, store=opened) if human is not None else None
        summaries = [run.summary for run in shown]
        figures, notes = _figures(summaries, by or natural_grouping(summaries))

        def write(out: TextIO) -> None:
            page = Page(
                title=title,
                store=store_label,
                with_prompts=with_prompts,
                figures_note="; ".join(notes),
                extra_tables=agreed.tables() if agreed else (),
            )
            write_html(out, shown, figures, page)

        size = _written_whole(path, write)
    return HtmlReport(path, size, len(figures), notes)


def _written_whole(path: Path, write: Callable[[TextIO], None]) -> int | None:
    """`write` to the file at `path` (through a link, to the file it names), made beside it and moved over
    it once whole, with the permissions of the file it replaces; a device or pipe (`-o /dev/stdout`) is
    written to as it is. The file's size in bytes (None for a device or pipe)."""
    if path.exists() and not path.is_file():
        with path.open("w", encoding="utf-8") as out:
            write(out)
        return None
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        with part.open("w", encoding="utf-8") as out:
            write(out)
        if target.exists():
            shutil.copymode(target, part)
        part.replace(target)
    finally:
        part.unlink(missing_ok=True)
    return target.stat().st_size


def _report_run(store: Store, name: str, grader: str | None) -> ReportRun:
    """The run as the report shows it: its summary (kept or counted, as `kaoshi report`'s), and its samples
    read from the store as they are written (StoredSamples)."""
    record = store.get_run(name)
    chosen, grades = chosen_grades(store, name, grader)
    summary = read_summary(store, name, grader=chosen).without_unused_groups()
    samples = StoredSamples(store, name, grades)
    return ReportRun(record, summary, samples, chosen, grades, StoredSamples(store, name, light=True))


def _figures(summaries: Sequence[RunSummary], key: str) -> tuple[list[Figure], tuple[str, ...]]:
    """The bar chart and, with three or more groups, the radar; notes say why any is missing."""
    figures: list[Figure] = []
    notes: list[str] = []
    for kind in ("bar", "radar"):
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                figure = draw(summaries, key, kind, english_names())
                figures.append(Figure(f"accuracy by {key} ({kind})", png_bytes(figure)))
            notes += [str(w.message) for w in caught]
        except PlotError as exc:
            notes.append(str(exc))
    return figures, tuple(dict.fromkeys(notes))
