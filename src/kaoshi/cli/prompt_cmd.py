"""kaoshi prompt show: the exact text (or messages) a question would be sent with."""

from __future__ import annotations

import argparse
import json

from kaoshi.api.prompts import render_prompt
from kaoshi.cli.common import eprint
from kaoshi.cli.run_cmd import add_load_options, add_prompt_options, load_from_args


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
    shown = render_prompt(
        load_from_args(args).exam,
        args.question,
        prompt=args.prompt,
        shots=args.shots,
        chat=bool(args.chat),
        system=args.system,
        exemplars=args.exemplars,  # a tuple of ids: --exemplars is parsed by its RunConfig field
        exemplars_file=args.exemplars_file,
        notify=eprint,
    )
    if args.format == "json":
        print(json.dumps(shown.prompt.payload(), ensure_ascii=False))
        return 0
    form = "chat" if shown.chat else "completion"
    print(f"# {shown.template} v{shown.template_version}, {shown.prompt.shots} exemplar(s), {form}")
    print(shown.prompt.display())
    return 0
