"""kaoshi export: files other tools take, starting with the C-Eval test submission."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.report.submission import ceval_submission, write_submission


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("export", help="export a run for another tool (C-Eval submission)")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    ceval = kinds.add_parser("ceval-submission", help="the C-Eval test submission JSON")
    ceval.add_argument("run", help="a C-Eval run on the test split, all 52 subjects")
    ceval.add_argument("-o", "--output", type=Path, required=True, help="where to write the JSON")
    add_store_option(ceval)
    ceval.set_defaults(handler=ceval_submission_command)


def ceval_submission_command(args: argparse.Namespace) -> int:
    with open_existing_store(args) as store:
        run = store.get_run(args.run)
        submission = ceval_submission(run, store.iter_samples(args.run))
    write_submission(submission, args.output)
    total = sum(len(answers) for answers in submission.answers.values())
    eprint(f"wrote {args.output}: {len(submission.answers)} subjects, {total} answers")
    warning = submission.warning()
    if warning:
        eprint(warning)
    return 0
