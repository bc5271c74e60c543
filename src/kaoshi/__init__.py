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

__version__ = "0.1.0"

# The exam types and the benchmark registry; every other public name is kaoshi.api's (its own table,
# read on first use: importing kaoshi imports no kaoshi module at all).
_OWN = {
    "Exam": "kaoshi.data",
    "Question": "kaoshi.data",
    "QuestionType": "kaoshi.data",
    "Benchmark": "kaoshi.benchmarks",
    "register_benchmark": "kaoshi.benchmarks",
}

if TYPE_CHECKING:
    from kaoshi.api import *  # noqa: F403  (the API's names, typed for mypy and editors)
    from kaoshi.benchmarks import Benchmark as Benchmark
    from kaoshi.benchmarks import register_benchmark as register_benchmark
    from kaoshi.data import Exam as Exam
    from kaoshi.data import Question as Question
    from kaoshi.data import QuestionType as QuestionType


def _exports() -> dict[str, str]:
    """Public name -> the module that defines it."""
    from kaoshi.api import _EXPORTS as api

    return {**api, **_OWN}


def __getattr__(name: str) -> Any:
    if name == "__all__":  # `from kaoshi import *`: the names are the API's, known once it is asked
        return ["__version__", *sorted(_exports())]
    module = _exports().get(name)
    if module is None:
        raise AttributeError(f"module 'kaoshi' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_exports()])
