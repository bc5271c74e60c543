"""kaoshi contamination: a run on the original exam against a run on its shuffled-options variant."""

from __future__ import annotations

import argparse
import json

from kaoshi.api.studies import ContaminationRow, answer_text, contamination
from kaoshi.api.vocabulary import CONTAMINATION_GROUPINGS as GROUPINGS
from kaoshi.cli.common import add_store_option, eprint, existing_store_path
from kaoshi.report.render import compared_on, coverage_table, percent
from kaoshi.report.tables import TEXT_FORMATS, TextTable, render_tables

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
    result = contamination(
        args.original, args.shuffled, store=existing_store_path(args), by=args.by, notify=eprint
    )
    if args.format == "json":
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
        return 0
    headline = compared_on(len(result.pairs), 2)
    candidates = result.candidates
    note = (
        "drop: original minus shuffled accuracy (points); only original: right only in the original order "
        "(position-memorised candidates); old position: of those, answered the gold's old letters; "
        "McNemar: exact, two-sided, on the discordant pairs"
    )
    tables = [
        coverage_table(f"runs — {headline}", result.coverage, result.conflicts),
        TextTable(
            f"{args.original} vs {args.shuffled} (shuffled options)",
            ("", *_HEADERS),
            [_row(result.overall)],
            note=note,
        ),
    ]
    for key, rows in result.groups.items():
        tables.append(TextTable(f"by {key}", (key, *_HEADERS), [_row(r) for r in rows]))
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
