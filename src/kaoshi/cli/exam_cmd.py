"""kaoshi exam shuffle: write an exam with every choice question's options permuted (kaoshi JSONL)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kaoshi.api.exam_files import save_exam, shuffle_exam
from kaoshi.cli.common import eprint
from kaoshi.cli.run_cmd import add_load_options, load_named_exam


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("exam", help="transform exam files (shuffle options)")
    commands = parser.add_subparsers(dest="exam_command", required=True, metavar="COMMAND")
    shuffle = commands.add_parser(
        "shuffle", help="permute each choice question's options; gold letters follow, the permutation is kept"
    )
    shuffle.add_argument("input", nargs="?", help="the exam file or folder (same as --data)")
    add_load_options(shuffle)
    shuffle.add_argument("--seed", type=int, default=0)
    shuffle.add_argument("-o", "--output", type=Path, required=True, help="the kaoshi JSONL file to write")
    shuffle.set_defaults(handler=shuffle_command)


def shuffle_command(args: argparse.Namespace) -> int:
    result = load_named_exam(args, "kaoshi exam shuffle IN -o OUT")
    exam = shuffle_exam(result.exam, args.seed)
    moved = sum(bool(q.original_letters) for q in exam.questions)
    count = save_exam(exam, args.output, header={"shuffle_seed": args.seed})
    eprint(f"wrote {args.output}: {count} question(s), options of {moved} permuted (seed {args.seed})")
    return 0
