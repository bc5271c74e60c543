"""kaoshi html: one self-contained HTML file with tables, plots and a per-question browser."""

from __future__ import annotations

import argparse
import os
import warnings
from collections.abc import Sequence
from pathlib import Path

from kaoshi.api.grading_agreement import agreement
from kaoshi.api.summary import open_store, read_summary
from kaoshi.benchmarks import english_names
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.report import GROUP_KEYS, RunSummary
from kaoshi.report.html import Figure, ReportRun, write_html
from kaoshi.report.plot import PlotError, draw, natural_grouping, png_bytes
from kaoshi.results.grading import StoredSamples, chosen_grader
from kaoshi.store.sqlite import Store


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("html", help="a self-contained HTML report of one or more runs")
    parser.add_argument("runs", nargs="+", metavar="RUN")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the .html file to write")
    parser.add_argument(
        "--by",
        choices=tuple(GROUP_KEYS),
        help="grouping of the plots (default: domain, else category, else subject, else type)",
    )
    parser.add_argument("--title", default="kaoshi report")
    parser.add_argument("--no-prompts", action="store_true", help="leave the prompts out (smaller file)")
    parser.add_argument(
        "--grader", help="whose grades of open answers count (default: each run's most recent judge setup)"
    )
    parser.add_argument(
        "--human",
        type=Path,
        help="CSV of human scores (question_id, scorer, score) of the first run's open answers: adds the "
        "agreement of every grader with them",
    )
    add_store_option(parser)
    parser.set_defaults(handler=html_command)


def html_command(args: argparse.Namespace) -> int:
    store = existing_store_path(args)
    with open_store(store, read_only=True) as opened:
        runs = [_report_run(opened, name, args.grader) for name in args.runs]
        human = agreement(args.runs[0], args.human, store=opened) if args.human else None
        summaries = [r.summary for r in runs]
        figures, note = _figures(summaries, args.by or natural_grouping(summaries))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        # written beside the output and moved over it whole: a report that fails part-way leaves none
        part = args.output.with_name(f".{args.output.name}.{os.getpid()}.part")
        try:
            with part.open("w", encoding="utf-8") as out:
                write_html(
                    out,
                    runs,
                    figures,
                    title=args.title,
                    store=str(args.store or ""),
                    with_prompts=not args.no_prompts,
                    figures_note=note,
                    extra_tables=human.tables() if human else (),
                )
            part.replace(args.output)
        finally:
            part.unlink(missing_ok=True)
    size = args.output.stat().st_size
    eprint(f"wrote {args.output} ({size / 1024:.0f} KiB, {len(figures)} plot(s))")
    return 0


def _report_run(store: Store, name: str, grader: str | None) -> ReportRun:
    """The run as the report shows it: its summary (kept or counted, as `kaoshi report`'s), and its samples
    read from the store as they are written (StoredSamples), never held."""
    record = store.get_run(name)
    chosen = chosen_grader(store, name, grader)
    grades = store.grades(name, chosen) if chosen else {}
    summary = read_summary(store, name, grader=chosen).without_unused_groups()
    samples = StoredSamples(store, name, grades)
    return ReportRun(record, summary, samples, chosen, grades, StoredSamples(store, name, light=True))


def _figures(summaries: Sequence[RunSummary], key: str) -> tuple[list[Figure], str]:
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
    for note in dict.fromkeys(notes):
        eprint(f"note: {note}")
    return figures, "; ".join(dict.fromkeys(notes))
