"""`kaoshi report RUN` of a run whose counts are kept (the normal case: the run's writer keeps them) reads
them with the store, the question types and the report alone. It imports no prompt template machinery
(jinja2), run pipeline, model interface, plugin entry points or the other commands' option
vocabularies, and compiles none of answer extraction's large patterns: they were most of its 0.3 s start
at a 1,000,000-sample store, where the count it reads takes a twentieth of that."""

from __future__ import annotations

import argparse
import gc
import json
import typing
from pathlib import Path

import kaoshi
from kaoshi.api.kept import RUN, comparison_kind
from kaoshi.cli.main import COMMANDS, build_parser, main
from kaoshi.store import Store
from tests.support.fresh import run_fresh

# What the report of a kept run must not import (each was measured on its path before, 2 to 60 ms).
NOT_IMPORTED = (
    "jinja2",  # the user templates' engine (kaoshi.prompts.registry)
    "importlib.metadata",  # entry points: read only for a name kaoshi does not know
    "kaoshi.prompts.registry",
    "kaoshi.benchmarks.templates",  # every template by name
    "kaoshi.runner",  # the run's settings and pipeline (RunConfig: one option of the report's)
    "kaoshi.models.base",  # the model interface (the CLI needs only its ModelError)
    "kaoshi.models.registry",
    "kaoshi.analysis.voting",  # other commands' vocabularies (kaoshi.api.vocabulary)
    "kaoshi.analysis.contamination",
    "kaoshi.scoring.text_metrics",
    # rich's console and tables: a table that fits is drawn without them (kaoshi.report.tables)
    "rich.console",
    "rich.table",
    "rich.text",
    "kaoshi.api.comparing",  # the comparison of several runs
    "kaoshi.api.ledger",  # tokens and costs: --price only
    "kaoshi.analysis.cost",
    "kaoshi.api.store_tools",  # `kaoshi runs rm / mv`, registered beside the report
    "kaoshi.store.maintenance",
    "kaoshi.scoring.extract",  # reading replies: the question types import it where they read one
    "kaoshi.scoring.verdict",
    "kaoshi.scoring.math_answer",
    "kaoshi.data.subsets",
    "kaoshi.report.compare",  # the comparison of runs and which questions differ: where runs are compared
    "kaoshi.report.differences",
    "kaoshi.store.run_admin",  # `kaoshi runs rm / mv`
    "kaoshi.store.batches",  # the provider batches of `kaoshi run --batch`
    "socket",  # the host name: asked of runs still open only
    "uuid",  # (with platform) for the id of a new lease holder or store, which os.urandom makes
    "platform",
)


def report_in_fresh_process(store: Path, run: str) -> tuple[str, set[str], int | None]:
    """`kaoshi report RUN`'s output in a fresh interpreter, the modules it held after, and how many of
    answer extraction's lazily compiled patterns it compiled (None: all, as it was imported)."""
    code = (
        "import json, sys\n"
        "from kaoshi.cli.main import main\n"
        f"code = main(['report', {run!r}, '--store', {str(store)!r}])\n"
        "extract = sys.modules.get('kaoshi.scoring.extract')\n"
        "lazy = getattr(extract, '_compiled', None)  # None: compiled as the module was imported\n"
        "compiled = lazy.cache_info().currsize if lazy is not None else None if extract else 0\n"
        "print(json.dumps([code, sorted(sys.modules), compiled]), file=sys.stderr)\n"
    )
    result = run_fresh(code)
    exit_code, modules, compiled = json.loads(result.stderr.strip().splitlines()[-1])
    assert exit_code == 0, result.stderr
    return result.stdout, set(modules), compiled


def test_report_of_a_kept_run_imports_only_what_it_reads(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    kaoshi.evaluate("sample", "random", store=store, run_name="first")
    with Store(store, read_only=True) as opened:  # the run's writer kept its counts: the report reads them
        kind = comparison_kind(RUN.label, [opened.get_run("first")])
        assert opened.kept_summaries(kind, ["first"])["first"].current

    shown, modules, compiled = report_in_fresh_process(store, "first")

    assert "first — overall" in shown
    imported = sorted(m for m in modules if any(m == n or m.startswith(f"{n}.") for n in NOT_IMPORTED))
    assert imported == []
    assert compiled == 0


def commands_of(parser: argparse.ArgumentParser) -> list[str]:
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(subparsers.choices)


def test_the_report_builds_no_parser_for_the_other_commands() -> None:
    """Only the top-level help lists every command: the report's parser holds its own module's commands
    (a parser for each other one was 2% of its start), and asked for help it lists them all."""
    own = [name for name, command in COMMANDS.items() if command.module == COMMANDS["report"].module]
    assert commands_of(build_parser(["report", "first", "--store", "runs.sqlite"])) == own
    for asking in (["-h", "report"], ["--he", "report"], ["report", "--help"]):
        assert commands_of(build_parser(asking)) == list(COMMANDS)
    assert build_parser(["-h", "report"]).format_help() == build_parser().format_help()


def test_main_called_with_arguments_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    """Only the `kaoshi` executable, which ends with its command, freezes what the command's start made
    (gc.freeze): a process that calls main goes on, with what it froze itself still frozen."""
    store = tmp_path / "runs.sqlite"
    kaoshi.evaluate("sample", "random", store=store, run_name="first")
    held = [object() for _ in range(3)]  # the caller's own frozen objects
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert main(["report", "first", "--store", str(store), "--format", "json"]) == 0
        assert gc.isenabled()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    assert held


def test_the_public_result_types_name_types_that_resolve() -> None:
    """What is imported for type checking only (to start faster) is never in a public result type's
    fields: typing.get_type_hints resolves them, as serialisers (dataclasses-json, pydantic, cattrs) ask.
    Benchmark's loader type is the exception, imported where questions are read."""
    unresolved = []
    for name in kaoshi.__all__:
        found = getattr(kaoshi, name)
        if isinstance(found, type) and name != "Benchmark":
            try:
                typing.get_type_hints(found)
            except NameError as exc:
                unresolved.append(f"{name}: {exc}")
    assert unresolved == []
