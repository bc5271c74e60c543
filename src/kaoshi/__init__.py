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

# public name -> the module that defines it
_EXPORTS = {
    "Exam": "kaoshi.data",
    "LoadResult": "kaoshi.data",
    "Question": "kaoshi.data",
    "QuestionType": "kaoshi.data",
    "agreement": "kaoshi.api",
    "AgreementReport": "kaoshi.api",
    "compare": "kaoshi.api",
    "Comparison": "kaoshi.api",
    "Contamination": "kaoshi.api",
    "contamination": "kaoshi.api",
    "EvalResult": "kaoshi.api",
    "evaluate": "kaoshi.api",
    "checkpoint_store": "kaoshi.api",
    "check_store": "kaoshi.api",
    "backup_store": "kaoshi.api",
    "judge": "kaoshi.api",
    "JudgeOutcome": "kaoshi.api",
    "leaderboard": "kaoshi.api",
    "Benchmark": "kaoshi.benchmarks",
    "register_benchmark": "kaoshi.benchmarks",
    "load_exam": "kaoshi.api",
    "load_model": "kaoshi.api",
    "load_run": "kaoshi.api",
    "LoadedRun": "kaoshi.api",
    "merge": "kaoshi.api",
    "render_prompt": "kaoshi.api",
    "RenderedPrompt": "kaoshi.api",
    "rescore": "kaoshi.api",
    "RescoreOutcome": "kaoshi.api",
    "RunInfo": "kaoshi.api",
    "RunInterrupted": "kaoshi.api",
    "RunOptions": "kaoshi.api",
    "runs": "kaoshi.api",
    "summarize": "kaoshi.api",
    "Vote": "kaoshi.api",
    "vote": "kaoshi.api",
}

if TYPE_CHECKING:
    from kaoshi.api import (
        AgreementReport,
        Comparison,
        Contamination,
        EvalResult,
        JudgeOutcome,
        LoadedRun,
        RenderedPrompt,
        RescoreOutcome,
        RunInfo,
        RunInterrupted,
        RunOptions,
        Vote,
        agreement,
        backup_store,
        check_store,
        checkpoint_store,
        compare,
        contamination,
        evaluate,
        judge,
        leaderboard,
        load_exam,
        load_model,
        load_run,
        merge,
        render_prompt,
        rescore,
        runs,
        summarize,
        vote,
    )
    from kaoshi.benchmarks import Benchmark, register_benchmark
    from kaoshi.data import Exam, LoadResult, Question, QuestionType


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kaoshi' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "AgreementReport",
    "Benchmark",
    "Comparison",
    "Contamination",
    "EvalResult",
    "Exam",
    "JudgeOutcome",
    "LoadResult",
    "LoadedRun",
    "Question",
    "QuestionType",
    "RenderedPrompt",
    "RescoreOutcome",
    "RunInfo",
    "RunInterrupted",
    "RunOptions",
    "Vote",
    "__version__",
    "agreement",
    "backup_store",
    "check_store",
    "checkpoint_store",
    "compare",
    "contamination",
    "evaluate",
    "judge",
    "leaderboard",
    "load_exam",
    "load_model",
    "load_run",
    "merge",
    "register_benchmark",
    "render_prompt",
    "rescore",
    "runs",
    "summarize",
    "vote",
]
