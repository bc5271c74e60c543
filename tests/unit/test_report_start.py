"""`kaoshi report RUN` of a run whose counts are kept (the normal case: the run's writer keeps them) reads
them with the store, the question types and the report alone. It imports no prompt template machinery
(jinja2), run pipeline, model interface, plugin entry points or the other commands' option
vocabularies, and compiles none of answer extraction's large patterns: they were most of its 0.3 s start
at a 1,000,000-sample store, where the count it reads takes a twentieth of that."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kaoshi
from kaoshi.api.kept import RUN, comparison_kind
from kaoshi.store import Store

SRC = Path(__file__).resolve().parents[2] / "src"

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
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
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
