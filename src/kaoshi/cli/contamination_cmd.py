"""kaoshi contamination: a run on the original exam against a run on its shuffled-options variant."""

from __future__ import annotations

import argparse
import json

from kaoshi.analysis.contamination import (
    GROUPINGS,
    ContaminationRow,
    answer_text,
    contamination_row,
    grouped_rows,
    pair_runs,
)
from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.report.render import compared_on, coverage_table, percent
from kaoshi.report.tables import TEXT_FORMATS, TextTable, render_tables
from kaoshi.store.coverage import run_coverage
from kaoshi.store.pairing import conflict_warning

_HEADERS = (
    "n",
    "original",
    "shuffled",
    "drop",
    "only original",
    "only shuffled",
    "old position",
    "McNemar p",
)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "contamination", help="original vs shuffled-options run: accuracy drop, McNemar's exact test"
    )
    parser.add_argument("original", metavar="RUN_ORIGINAL")
    parser.add_argument("shuffled", metavar="RUN_SHUFFLED")
    parser.add_argument("--by", action="append", choices=tuple(GROUPINGS), help="default: domain and type")
    parser.add_argument(
        "--list", action="store_true", help="list the questions right only in the original order"
    )
    parser.add_argument("--format", choices=(*TEXT_FORMATS, "json"), default="table")
    add_store_option(parser)
    parser.set_defaults(handler=contamination_command)


def _row(row: ContaminationRow) -> list[str]:
    drop = row.drop
    return [
        row.label,
        str(row.n),
        percent(row.original_accuracy),
        percent(row.shuffled_accuracy),
        "—" if drop is None else f"{100 * drop:+.1f}",
        str(row.only_original),
        str(row.only_shuffled),
        str(row.old_position),
        f"{row.p_value:.4g}",
    ]


def contamination_command(args: argparse.Namespace) -> int:
    with open_existing_store(args) as store:
        runs = [store.get_run(args.original), store.get_run(args.shuffled)]
        samples = [store.samples(args.original), store.samples(args.shuffled)]
    paired = pair_runs(*samples)
    pairs = paired.pairs
    warning = conflict_warning(paired.conflicts)
    if warning:
        eprint(warning)
    if not pairs:
        raise ValueError(f"runs {args.original!r} and {args.shuffled!r} share no graded question")
    coverage = [run_coverage(run, run_samples) for run, run_samples in zip(runs, samples, strict=True)]
    headline = compared_on(len(pairs), 2)
    if runs[0].spec.shuffle_seed is not None or runs[1].spec.shuffle_seed is None:
        eprint(
            f"note: {args.shuffled!r} should be the shuffled run (kaoshi run --shuffle-options SEED); "
            f"seeds recorded: {runs[0].spec.shuffle_seed}, {runs[1].spec.shuffle_seed}"
        )
    unmapped = sum(1 for p in pairs if p.shown is not None and p.shuffled is None)
    if unmapped:
        eprint(f"note: {unmapped} shuffled answer(s) could not be mapped back (option texts differ)")
    keys = args.by or list(GROUPINGS)
    overall = contamination_row("all", pairs)
    candidates = [p for p in pairs if p.memorised_candidate]
    if args.format == "json":
        document = {
            "original": args.original,
            "shuffled": args.shuffled,
            "compared_on": {"questions": len(pairs), "runs": 2, "common": True},
            "coverage": [c.to_json() for c in coverage],
            "conflicting_ids": list(paired.conflicts),
            "overall": overall.to_json(),
            "groups": {key: [r.to_json() for r in grouped_rows(pairs, key)] for key in keys},
            "candidates": [
                {
                    "id": p.question_id,
                    "domain": p.domain,
                    "type": p.qtype,
                    "gold": answer_text(p.gold),
                    "original": answer_text(p.original),
                    "shuffled": answer_text(p.shuffled),
                    "shown": answer_text(p.shown),
                    "old_position": p.old_position,
                }
                for p in candidates
            ],
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    note = (
        "drop: original minus shuffled accuracy (points); only original: right only in the original order "
        "(position-memorised candidates); old position: of those, answered the gold's old letters; "
        "McNemar: exact, two-sided, on the discordant pairs"
    )
    tables = [
        coverage_table(f"runs — {headline}", coverage, paired.conflicts),
        TextTable(
            f"{args.original} vs {args.shuffled} (shuffled options)",
            ("", *_HEADERS),
            [_row(overall)],
            note=note,
        ),
    ]
    for key in keys:
        tables.append(TextTable(f"by {key}", (key, *_HEADERS), [_row(r) for r in grouped_rows(pairs, key)]))
    if args.list:
        tables.append(
            TextTable(
                f"{len(candidates)} question(s) right only in the original order",
                (
                    "id",
                    "domain",
                    "type",
                    "gold",
                    "original",
                    "shuffled (mapped back)",
                    "as shown",
                    "old position",
                ),
                [
                    [
                        p.question_id,
                        p.domain or "",
                        p.qtype,
                        answer_text(p.gold),
                        answer_text(p.original),
                        answer_text(p.shuffled),
                        answer_text(p.shown),
                        "yes" if p.old_position else "",
                    ]
                    for p in candidates
                ],
            )
        )
    print(render_tables(tables, args.format))
    return 0
