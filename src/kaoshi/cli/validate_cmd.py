"""kaoshi validate: check an exam file and report every bad row."""

from __future__ import annotations

import argparse
from collections import Counter

from kaoshi.api import load_exam_result
from kaoshi.cli.common import EXIT_BAD_INPUT, eprint


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "validate", help="check an exam file (kaoshi JSONL, QualBench, C-Eval folder)"
    )
    parser.add_argument("path")
    parser.add_argument("--benchmark", help="format (default: detected from the path)")
    parser.add_argument("--split", help="split to check (C-Eval default: val)")
    parser.add_argument(
        "--on-invalid", choices=("fail", "skip"), default="fail", help="exit 2 on bad rows, or 0"
    )
    parser.add_argument("--clean", action="store_true", help="QualBench: report what the cleaning rule drops")
    parser.set_defaults(handler=validate_command)


def validate_command(args: argparse.Namespace) -> int:
    result = load_exam_result(args.benchmark, args.path, args.split, on_invalid="skip", clean=args.clean)
    for error in result.errors:
        eprint(str(error))
    for warning in result.warnings:
        eprint(f"warning: {warning}")
    for dropped in result.dropped:
        eprint(f"cleaning drops {dropped.question_id}: {dropped.reason}")
    exam = result.exam
    types = Counter(q.type.value for q in exam.questions)
    breakdown = ", ".join(f"{count} {name}" for name, count in sorted(types.items()))
    status = "invalid" if result.errors else "ok"
    print(
        f"{status}: {args.path}: {len(exam)} question(s) ({breakdown}), {len(exam.fewshot)} few-shot, "
        f"{len(result.errors)} invalid row(s), fingerprint {exam.fingerprint[:12]}"
    )
    if result.errors and args.on_invalid == "fail":
        return EXIT_BAD_INPUT
    return 0
