"""kaoshi runs / report / samples: read what the store holds (`kaoshi runs rm / mv`: kaoshi.cli.runs_cmd)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kaoshi.api import RunStatus, SampleRecord
from kaoshi.api.summary import (
    graded_samples,
    iter_stored_samples,
    open_store,
    runs,
    stored_samples,
    summarize,
)
from kaoshi.cli.common import add_store_option, eprint, existing_store_path, price_option
from kaoshi.cli.config_options import add_field_option
from kaoshi.cli.runs_cmd import add_run_actions
from kaoshi.errors import InputError
from kaoshi.report import FORMATS, GROUP_KEYS, RunSummary, render_summary
from kaoshi.report.render import usage_table
from kaoshi.report.tables import PIPE_WIDTH, TextTable, output_width, render_tables
from kaoshi.results.standard import STANDARD_SCORES_OPTION

SAMPLE_STATUSES = ("ok", "unparsed", "ambiguous", "error")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    runs = subparsers.add_parser(
        "runs",
        help="list the runs in the store; runs rm / runs mv remove or rename runs",
        description="List the runs in the store; `kaoshi runs rm NAME...` removes runs (asking first), "
        "`kaoshi runs mv OLD NEW` renames one.",
    )
    runs.add_argument("--format", choices=("table", "json"), default="table")
    add_store_option(runs)
    runs.set_defaults(handler=runs_command)
    add_run_actions(runs)

    report = subparsers.add_parser(
        "report",
        help="accuracy overall and by domain / type / subject / category / group; several runs side by side",
    )
    report.add_argument(
        "runs", nargs="+", metavar="RUN", help="one run, or several to compare (first = baseline)"
    )
    report.add_argument("--by", action="append", choices=tuple(GROUP_KEYS), help="grouping (repeatable)")
    report.add_argument("--format", choices=FORMATS, default="table")
    report.add_argument("--show", choices=SAMPLE_STATUSES[1:], help="also list the samples with this status")
    report.add_argument(
        "--resamples", type=int, default=10_000, help="paired bootstrap resamples when comparing runs"
    )
    report.add_argument(
        "--grader", help="whose grades of open answers count (default: the run's most recent judge setup)"
    )
    report.add_argument(
        "--price",
        type=price_option,
        metavar="IN,OUT[,CACHED]|FILE",
        help="also each run's tokens and what they cost (prices per million prompt, completion and cached "
        'prompt tokens, or a prices file: JSON model -> "IN,OUT[,CACHED]", each run at its model\'s)',
    )
    # RunConfig.standard_scores's option, read from where it is written (kaoshi.results.standard): importing
    # RunConfig itself would import the model options and the run pipeline (about 12 ms of each report)
    add_field_option(report, "standard_scores", STANDARD_SCORES_OPTION, {})
    add_store_option(report)
    report.set_defaults(handler=report_command)

    samples = subparsers.add_parser("samples", help="the stored samples of a run")
    samples.add_argument("run")
    samples.add_argument("--format", choices=("jsonl", "table"), default="table")
    samples.add_argument("--status", choices=SAMPLE_STATUSES, help="only samples with this status")
    add_store_option(samples)
    samples.set_defaults(handler=samples_command)


def runs_command(args: argparse.Namespace) -> int:
    rows = [info.to_json() for info in runs(store=existing_store_path(args))]
    if args.format == "json":
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    table = TextTable(
        "runs",
        ("run", "benchmark", "model", "method", "settings", "done", "accuracy", "status", "created"),
        [
            [
                row["run"],
                row["benchmark"],
                row["model"],
                row["method"],
                row["settings"],
                row["done"],
                "—" if row["accuracy"] is None else f"{100 * row['accuracy']:.1f}%",
                _shown_status(row),
                row["created"],
            ]
            for row in rows
        ],
        note="settings: split · shots · chat template or not · prompt and version · new tokens (objective/"
        "open answers) · limits; --format json has the whole spec",
        # the run's name is what a user copies: it never wraps; the settings wrap, the date goes first
        priority=(20, 12, 15, 11, 16, 18, 19, 17, 10),
        wrap=frozenset({2, 4}),
    )
    print(render_tables([table], "table"))
    return 0


def _shown_status(row: dict[str, Any]) -> str:
    """`finished`, `running`, `interrupted 12/40` (answered of asked: how far it got), or `held 12/40 by pid
    4242 on host h, no heartbeat for 75 s (paused or unresponsive)`; with `, waiting on 1 provider batch
    (1,000 requests)` after it for a run whose batches are out (--batch)."""
    waiting = ""
    if "waiting_batches" in row:  # kaoshi run --batch: the same command collects them
        batches = (
            "1 provider batch"
            if row["waiting_batches"] == 1
            else f"{row['waiting_batches']} provider batches"
        )
        waiting = f", waiting on {batches} ({row['waiting_requests']:,} requests)"
    if row["status"] == RunStatus.INTERRUPTED:
        return f"{row['status']} {row['answered']}/{row['questions']}{waiting}"
    if row["status"] == RunStatus.HELD:
        return f"{row['status']} {row['answered']}/{row['questions']} by {row['holder']}{waiting}"
    return str(row["status"]) + waiting


def report_command(args: argparse.Namespace) -> int:
    if args.resamples < 100:
        raise InputError("--resamples must be at least 100")
    store = existing_store_path(args)
    if len(args.runs) == 1:  # counted by SQLite, kind by kind (kaoshi.api.summary.read_summary)
        name = args.runs[0]
        by = args.by or tuple(GROUP_KEYS)
        # shown, never paired: read without its per-question outcomes
        summary = summarize(
            name, store=store, by=by, grader=args.grader, standard_scores=args.standard_score, outcomes=False
        )
        if summary.grader:
            eprint(f"{name}: open answers graded by {summary.grader}")
        shown = summary if args.format == "json" or args.by else summary.without_unused_groups()
        print(_with_usage(render_summary(shown, args.format), args, store))
        _show_samples(args, store)
        return 0
    # counted by SQLite on the common questions (kaoshi.api.counting), no prompt or output read, and kept
    # in the store: a later report of the same runs reads it while they are unchanged (kaoshi.api.kept)
    # Late import: only a report of several runs compares them
    from kaoshi.api.comparing import compare_stored

    # Late import: only a report of several runs compares them
    from kaoshi.report.compare import render_comparison

    compared = compare_stored(
        args.runs,
        store=store,
        keep=True,
        by=args.by or tuple(GROUP_KEYS),
        grader=args.grader,
        standard_scores=args.standard_score,
        shown=(lambda summary: summary)
        if args.format == "json" or args.by
        else RunSummary.without_unused_groups,
    )
    for one in compared.summaries:
        if one.grader:
            eprint(f"{one.run}: open answers graded by {one.grader}")
    warning = compared.pairing.warning()
    if warning:
        eprint(warning)
    print(_with_usage(render_comparison(compared, args.format, resamples=args.resamples), args, store))
    _show_samples(args, store)
    return 0


def _with_usage(rendered: str, args: argparse.Namespace, store: Path) -> str:
    """The report with each run's tokens and cost after it (--price): a table, or a `usage` entry in JSON
    (per run, for several)."""
    if args.price is None:
        return rendered
    # Late import: only --price reads prices (a report without it imports less)
    from kaoshi.api.ledger import priced_extractor_usage, priced_judge_usage, priced_usage, usage_json

    usages = priced_usage(args.runs, args.price, store=store)
    judged = priced_judge_usage(args.runs, args.price, store=store)  # the judge role of the ledger
    extracted = priced_extractor_usage(args.runs, args.price, store=store)  # and the extractor's
    if args.format == "json":
        document = json.loads(rendered)
        found = {name: usage_json(usage, price) for name, usage, price in usages}
        document["usage"] = found[args.runs[0]] if len(args.runs) == 1 else found
        if judged:
            document["judge_usage"] = {
                name: {judge: usage_json(usage, price) for run, judge, usage, price in judged if run == name}
                for name in args.runs
            }
        if extracted:
            document["extractor_usage"] = {
                run: {extractor: usage_json(usage, price)} for run, extractor, usage, price in extracted
            }
        return json.dumps(document, ensure_ascii=False, indent=2)
    rows = [
        *usages,
        *((f"{run} · judge {judge}", usage, price) for run, judge, usage, price in judged),
        *((f"{run} · extractor {model}", usage, price) for run, model, usage, price in extracted),
    ]
    return rendered + "\n" + render_tables([usage_table(rows)], args.format)


def _show_samples(args: argparse.Namespace, store: Path) -> None:
    """--show STATUS: each run's samples of that status, read whole (the run's others are not read)."""
    if not args.show:
        return
    with open_store(store, read_only=True) as opened:
        for name in args.runs:
            shown = graded_samples(name, store=opened, grader=args.grader, status=args.show)
            print_sample_table(f"{name}: {len(shown)} {args.show} sample(s)", shown)


def samples_command(args: argparse.Namespace) -> int:
    with open_store(existing_store_path(args), read_only=True) as opened:
        repeated = opened.get_run(args.run).spec.repeats > 1  # each line then says which sample it is
        if args.format == "jsonl":
            # streamed: the first line comes at once, and no more than one sample is held at a time; one
            # encoder and one write a line (json.dumps made an encoder a call, and print wrote twice: a
            # third of the command's time at 100,000 samples)
            encode = json.JSONEncoder(ensure_ascii=False).encode
            write = sys.stdout.write
            for sample in iter_stored_samples(opened, args.run, args.status):
                write(encode(sample.to_json(with_sample=repeated)) + "\n")
            return 0
        selected = stored_samples(args.run, store=opened, status=args.status)
    print_sample_table(f"{args.run}: {len(selected)} sample(s)", selected)
    return 0


def print_sample_table(title: str, samples: list[SampleRecord]) -> None:
    from rich.console import Console  # here: a report shows samples only when asked (--show)
    from rich.table import Table
    from rich.text import Text

    # text, never rich markup: a model's `[A]` or `[bold]` shows as it wrote it
    table = Table(title=Text(title), title_justify="left")
    for column in ("id", "type", "gold", "answer", "status", "correct", "response"):
        table.add_column(column, overflow="fold")
    for sample in samples:
        row = sample.to_json()
        response = (sample.response or sample.error or "").replace("\n", " ")
        cells = (
            row["id"] if not sample.sample else f"{row['id']} #{sample.sample + 1}",
            row["type"],
            _short(row["gold"]),
            _short(row["answer"]),
            row["status"],
            "" if row["correct"] is None else ("✓" if row["correct"] else "✗"),
            _short(response, 60),
        )
        table.add_row(*(Text(str(cell)) for cell in cells))
    Console(width=output_width() or PIPE_WIDTH).print(table)


def _short(text: str | None, width: int = 24) -> str:
    if text is None:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"
