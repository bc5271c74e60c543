"""kaoshi compare: runs on the same questions, each against a baseline, by group, with paired bootstraps."""

from __future__ import annotations

import argparse
import json

from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.report.paired import grouped_rows, outcomes_of, paired_table
from kaoshi.report.render import compared_on, coverage_table
from kaoshi.report.tables import TEXT_FORMATS, render_tables
from kaoshi.store.coverage import run_coverage
from kaoshi.store.pairing import graded, pair_questions

_KEYS = ("domain", "type", "subject", "category", "group")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="runs on the same questions against a baseline run, by domain / type (paired bootstrap)",
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="the first is the baseline unless --baseline")
    parser.add_argument("--baseline", help="the run the others are compared with")
    parser.add_argument("--by", action="append", choices=_KEYS, help="default: domain and type")
    parser.add_argument("--format", choices=(*TEXT_FORMATS, "json"), default="table")
    parser.add_argument("--resamples", type=int, default=10_000)
    add_store_option(parser)
    parser.set_defaults(handler=compare_command)


def compare_command(args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(args.runs))
    if args.baseline:
        names = [args.baseline, *(n for n in names if n != args.baseline)]
    if len(names) < 2:
        raise ValueError("compare needs at least two runs")
    if args.resamples < 100:
        raise ValueError("--resamples must be at least 100")
    with open_existing_store(args) as store:
        records = [store.get_run(n) for n in names]
        samples = [store.samples(n) for n in names]
    for record in records[1:]:
        differences = records[0].spec.differences(record.spec)
        shown = [f"{field} {old!r} → {new!r}" for field, old, new in differences if field != "fingerprint"]
        eprint(f"{record.name} vs {names[0]}: " + ("; ".join(shown) or "same settings"))
    keys = [None, *(args.by or ["domain", "type"])]
    pairing = pair_questions(samples, keep=graded)
    warning = pairing.warning()
    if warning:
        eprint(warning)
    shared, outcomes = outcomes_of(pairing)
    results = {key or "all": grouped_rows(shared, outcomes, key, args.resamples) for key in keys}
    if not results["all"]:
        raise ValueError("the runs share no graded question")
    coverage = [run_coverage(r, s) for r, s in zip(records, samples, strict=True)]
    headline = compared_on(len(shared), len(names))
    if args.format == "json":
        document = {
            "baseline": names[0],
            "runs": names,
            "compared_on": {"questions": len(shared), "runs": len(names), "common": True},
            "coverage": [c.to_json() for c in coverage],
            "conflicting_ids": list(pairing.conflicts),
            "groups": {key: [row.to_json(names) for row in rows] for key, rows in results.items()},
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    tables = [coverage_table(f"runs — {headline}", coverage, pairing.conflicts)]
    tables += [
        paired_table("overall" if key == "all" else f"by {key}", key if key != "all" else "", names, rows)
        for key, rows in results.items()
    ]
    print(render_tables(tables, args.format))
    return 0
