"""kaoshi agreement: each grader of a run's open answers against human scorers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kaoshi.analysis.agreement import read_human_scores
from kaoshi.cli.common import add_store_option, open_existing_store
from kaoshi.report.agreement import AgreementReport, agreement_report
from kaoshi.report.tables import TEXT_FORMATS, render_tables
from kaoshi.runner.judge import judgeable
from kaoshi.scoring.text_metrics import TOKENIZATIONS
from kaoshi.store import Store


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


def load_agreement(store: Store, run: str, human_csv: Path, tokenisation: str = "char") -> AgreementReport:
    """Every grader of the run (text metrics and each stored judge setup) against the CSV's scorers."""
    human = read_human_scores(human_csv)
    store.get_run(run)
    judged = {grader: store.grades(run, grader) for grader in store.graders(run)}
    try:
        return agreement_report(run, judgeable(store.iter_samples(run)), judged, human, tokenisation)
    except ValueError as exc:
        raise ValueError(f"{human_csv}: {exc}") from None


def agreement_command(args: argparse.Namespace) -> int:
    with open_existing_store(args) as store:
        report = load_agreement(store, args.run, args.human, args.tokenisation)
    if args.format == "json":
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_tables(report.tables(), args.format))
    return 0
