"""kaoshi split: a deterministic, stratified train/test split written as kaoshi JSONL with a manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api.exam_files import split_to_files
from kaoshi.api.vocabulary import STRATA
from kaoshi.cli.common import eprint
from kaoshi.cli.run_cmd import add_load_options, load_named_exam


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("split", help="split an exam into train and test parts (for finetune)")
    parser.add_argument("input", nargs="?", help="the exam file or folder (same as --data)")
    add_load_options(parser)
    parser.add_argument(
        "--train", type=float, default=0.7, help="share of questions to train on (default 0.7)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stratify", default="", help=f"comma-separated, from: {', '.join(STRATA)}")
    parser.add_argument("-o", "--output", type=Path, required=True, help="folder for train/test/manifest")
    parser.set_defaults(handler=split_command)


def split_command(args: argparse.Namespace) -> int:
    stratify = [s.strip() for s in args.stratify.split(",") if s.strip()]
    exam = load_named_exam(args, "kaoshi split EXAM -o DIR").exam
    written = split_to_files(
        exam,
        args.output,
        train=args.train,
        seed=args.seed,
        stratify=stratify,
        source=args.data or args.benchmark,
    )
    split, folder = written.split, written.folder
    moved = f"; {split.duplicates_moved} repeated question(s) kept in train" if split.duplicates_moved else ""
    eprint(
        f"wrote {folder}: train {len(split.train)}, test {len(split.test)} question(s) "
        f"(seed {args.seed}, stratified by {', '.join(stratify) or 'nothing'}){moved}"
    )
    return 0
