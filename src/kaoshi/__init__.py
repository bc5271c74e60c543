"""kaoshi (考试): measure how well large language models pass Chinese exams.

    import kaoshi
    exam = kaoshi.load_exam("sample")
    result = kaoshi.evaluate(exam, model="smollm2", method="loglik", store="runs.sqlite")
    result.summary.overall.accuracy

Importing kaoshi imports no heavy library (torch, transformers, vllm, openai): the names below are
imported on first use, so `kaoshi --help` starts fast and backends load only when chosen.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The essentials, each imported on first use (importing kaoshi imports no kaoshi module at all). Every
# other public function and type is in kaoshi.api (the results' types, store tools, exam files) or in its
# own module (kaoshi.errors, kaoshi.data, kaoshi.models, kaoshi.store).
_ESSENTIALS = {
    "Exam": "kaoshi.data",
    "Question": "kaoshi.data",
    "Benchmark": "kaoshi.benchmarks",
    "register_benchmark": "kaoshi.benchmarks",
    **dict.fromkeys(
        (
            "RunConfig",
            "EvalResult",
            "RunSummary",
            "load_exam",
            "evaluate",
            "load_model",
            "runs",
            "load_run",
            "summarize",
            "judge",
            "rescore",
            "merge",
            "vote",
            "compare",
            "contamination",
            "agreement",
            "leaderboard",
            "list_benchmarks",
            "list_backends",
            "render_prompt",
            "finetune",
        ),
        "kaoshi.api",
    ),
}

if TYPE_CHECKING:  # the same names, typed for mypy and editors
    from kaoshi.api import (
        EvalResult as EvalResult,
    )
    from kaoshi.api import (
        RunConfig as RunConfig,
    )
    from kaoshi.api import (
        RunSummary as RunSummary,
    )
    from kaoshi.api import (
        agreement as agreement,
    )
    from kaoshi.api import (
        compare as compare,
    )
    from kaoshi.api import (
        contamination as contamination,
    )
    from kaoshi.api import (
        evaluate as evaluate,
    )
    from kaoshi.api import (
        finetune as finetune,
    )
    from kaoshi.api import (
        judge as judge,
    )
    from kaoshi.api import (
        leaderboard as leaderboard,
    )
    from kaoshi.api import (
        list_backends as list_backends,
    )
    from kaoshi.api import (
        list_benchmarks as list_benchmarks,
    )
    from kaoshi.api import (
        load_exam as load_exam,
    )
    from kaoshi.api import (
        load_model as load_model,
    )
    from kaoshi.api import (
        load_run as load_run,
    )
    from kaoshi.api import (
        merge as merge,
    )
    from kaoshi.api import (
        render_prompt as render_prompt,
    )
    from kaoshi.api import (
        rescore as rescore,
    )
    from kaoshi.api import (
        runs as runs,
    )
    from kaoshi.api import (
        summarize as summarize,
    )
    from kaoshi.api import (
        vote as vote,
    )
    from kaoshi.benchmarks import Benchmark as Benchmark
    from kaoshi.benchmarks import register_benchmark as register_benchmark
    from kaoshi.data import Exam as Exam
    from kaoshi.data import Question as Question
    from kaoshi.version import __version__ as __version__


def _exports() -> dict[str, str]:
    """Public name -> the module that holds it."""
    return _ESSENTIALS


_SUBPACKAGES = frozenset(
    {
        *("analysis", "api", "benchmarks", "cli", "data", "errors", "finetune", "models", "prompts"),
        *("qtypes", "report", "results", "runner", "scoring", "store", "view"),
    }
)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        # Late import: `import kaoshi` imports no kaoshi module until a name is asked for.
        from kaoshi.version import __version__

        return __version__
    if name == "__all__":  # `from kaoshi import *`: the names are the API's, known once it is asked
        return ["__version__", *sorted(_exports())]
    module = _exports().get(name)
    if module is None:
        if name in _SUBPACKAGES:  # `kaoshi.api.X` after a bare `import kaoshi`
            return importlib.import_module(f"kaoshi.{name}")
        raise AttributeError(f"module 'kaoshi' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_exports()])
