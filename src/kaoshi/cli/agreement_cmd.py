"""kaoshi agreement: each grader of a run's open answers against human scorers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kaoshi.api.grading_agreement import agreement
from kaoshi.api.vocabulary import TOKENIZATIONS
from kaoshi.cli.common import add_store_option, existing_store_path
from kaoshi.report.tables import TEXT_FORMATS, render_tables


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "agreement", help="agreement of BLEU, ROUGE and LLM judges with human scores"
    )
    parser.add_argument("run")
    parser.add_argument("--human", type=Path, required=True, help="CSV: question_id, scorer, score (0-10)")
    parser.add_argument("--tokenisation", choices=TOKENIZATIONS, default="char", help="for BLEU / ROUGE")
    parser.add_argument("--format", choices=(*TEXT_FORMATS, "json"), default="table")
    add_store_option(parser)
    parser.set_defaults(handler=agreement_command)


def agreement_command(args: argparse.Namespace) -> int:
    report = agreement(args.run, args.human, store=existing_store_path(args), tokenisation=args.tokenisation)
    if args.format == "json":
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_tables(report.tables(), args.format))
    return 0
