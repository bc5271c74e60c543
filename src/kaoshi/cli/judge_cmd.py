"""kaoshi judge: grade a run's open answers with an LLM judge (careful / general / debate)."""

from __future__ import annotations

import argparse

from kaoshi.cli.common import add_store_option, eprint, open_existing_store
from kaoshi.cli.run_cmd import add_backend_options, model_options
from kaoshi.models import resolve_model
from kaoshi.prompts.judge import JUDGE_MODES
from kaoshi.runner.judge import JudgeSetup, judge_run, pending


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("judge", help="grade the open answers of a run with an LLM judge")
    parser.add_argument("run")
    parser.add_argument(
        "--judge", required=True, help="the judge model, e.g. openai:gpt-4o, smollm2, mock:FILE"
    )
    parser.add_argument(
        "--mode", choices=JUDGE_MODES, default="careful", help="careful (default), general, debate"
    )
    parser.add_argument("--second-judge", help="debate: the second judge (default: the first)")
    parser.add_argument("--max-new-tokens", type=int, default=512, help="judge reply budget")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, help="requests per model call (default: the backend's)")
    add_backend_options(parser)
    add_store_option(parser)
    parser.set_defaults(handler=judge_command)


def judge_command(args: argparse.Namespace) -> int:
    if args.second_judge and args.mode != "debate":
        raise ValueError("--second-judge is for --mode debate")
    setup = JudgeSetup(args.mode, args.judge, args.second_judge, args.max_new_tokens)
    options = model_options(args)
    with open_existing_store(args) as store:
        store.get_run(args.run)
        todo, total = pending(store, args.run, setup)
        if not todo:  # nothing to ask: no judge model is even loaded
            eprint(f"{setup.grader}: 0 graded, {total} already graded")
            return 0
        first = resolve_model(args.judge, options)
        second = resolve_model(args.second_judge, options) if args.second_judge else None
        try:
            outcome = judge_run(store, args.run, setup, first, second)
        finally:
            first.close()
            if second is not None:
                second.close()
    eprint(
        f"{outcome.grader}: {outcome.graded} graded, {outcome.unparsed} unparsed, {outcome.errors} error(s), "
        f"{outcome.already} already graded; {outcome.seconds:.1f} s"
    )
    return 0
