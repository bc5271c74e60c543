"""kaoshi benchmarks: the benchmarks kaoshi can load, how, and with which prompt."""

from __future__ import annotations

import argparse
import json

from kaoshi.api import list_benchmarks
from kaoshi.report.tables import TextTable, render_tables


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("benchmarks", help="list the benchmarks kaoshi can load")
    parser.add_argument("--format", choices=("table", "md", "json"), default="table")
    parser.set_defaults(handler=benchmarks_command)


def benchmarks_command(args: argparse.Namespace) -> int:
    listed = list_benchmarks()
    if args.format == "json":
        print(json.dumps([b.to_json() for b in listed], ensure_ascii=False, indent=2))
        return 0
    rows = [
        [
            b.name,
            b.description,
            b.formats or "—",
            ", ".join(b.splits) or "—",
            b.size or "—",
            b.licence or "—",
            b.default_prompt,
            b.hub_id or "—",
            "yes" if b.detected else "no",
            ", ".join(b.exporters) or "—",
        ]
        for b in listed
    ]
    table = TextTable(
        "benchmarks",
        (
            "name",
            "what it is",
            "--data takes",
            "splits",
            "size",
            "licence",
            "default prompt",
            "hub id",
            "found from --data",
            "exports",
        ),
        rows,
        note="kaoshi run --benchmark NAME [--data PATH]; add your own with kaoshi.register_benchmark",
        # what a newcomer picks a benchmark by stays longest in a narrow terminal; prose wraps
        priority=(10, 9, 5, 7, 6, 3, 8, 2, 1, 4),
        wrap=frozenset({1, 2, 4, 5}),
    )
    checked = [b for b in listed if b.published is not None]
    parity = TextTable(
        "checked on the published files",
        ("name", "repository @ commit", "official count", "kaoshi loads", "prompt parity", "score parity"),
        [
            [
                b.name,
                f"{b.published.repository} @ {b.published.commit[:7]}",
                b.published.official_count,
                b.published.loaded,
                b.published.prompt_parity,
                b.published.score_parity,
            ]
            for b in checked
            if b.published is not None
        ],
        note="KAOSHI_REALDATA=<folder of those repositories> pytest tests/realdata checks them again",
        wrap=frozenset({1, 2, 3, 4, 5}),
    )
    print(render_tables([table, parity] if checked else [table], args.format))
    return 0
