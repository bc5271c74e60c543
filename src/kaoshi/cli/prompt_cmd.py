"""kaoshi prompt show: the exact text (or messages) a question would be sent with."""

from __future__ import annotations

import argparse
import json

from kaoshi.cli.run_cmd import (
    add_load_options,
    add_prompt_options,
    load_from_args,
    run_exemplars,
    template_from_args,
    with_exemplars_file,
)
from kaoshi.prompts import RenderOptions


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("prompt", help="show the prompt a question is sent with")
    actions = parser.add_subparsers(dest="prompt_action", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="print the exact prompt text or chat messages")
    add_load_options(show)
    add_prompt_options(show)
    show.add_argument("--question", required=True, help="question id (C-Eval: subject/id)")
    show.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help='text: readable; json: one object, {"text": ...} or {"messages": [...]}, exactly what is sent',
    )
    show.set_defaults(handler=show_command)


def show_command(args: argparse.Namespace) -> int:
    exam = load_from_args(args).exam
    benchmark = str(exam.metadata.get("benchmark", ""))
    template, shots = template_from_args(args, benchmark)
    exam, _ = with_exemplars_file(exam, args)
    question = exam.question(args.question)
    options = RenderOptions(shots, bool(args.chat), args.system, run_exemplars(template, exam, args))
    prompt = template.render(question, exam, options)
    if args.format == "json":
        print(json.dumps(prompt.payload(), ensure_ascii=False))
        return 0
    form = "chat" if args.chat else "completion"
    print(f"# {template.name} v{template.version}, {prompt.shots} exemplar(s), {form}")
    print(prompt.display())
    return 0
