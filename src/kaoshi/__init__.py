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
    "list_benchmarks": "kaoshi.api",
    "BenchmarkInfo": "kaoshi.api",
    "StoreCheck": "kaoshi.api",
    "CheckpointResult": "kaoshi.api",
    "BackupResult": "kaoshi.api",
    "MergeOutcome": "kaoshi.api",
    "Board": "kaoshi.api",
    "Tally": "kaoshi.api",
    "RunSummary": "kaoshi.api",
    "StoreError": "kaoshi.api",
    "UnknownName": "kaoshi.api",
    "InputError": "kaoshi.api",
    "DataError": "kaoshi.api",
    "ModelError": "kaoshi.api",
    "Model": "kaoshi.api",
    "ModelOptions": "kaoshi.api",
    "RunSpec": "kaoshi.api",
    "RunRecord": "kaoshi.api",
    "SampleRecord": "kaoshi.api",
    "SplitFiles": "kaoshi.api",
    "FinetuneResult": "kaoshi.api",
    "split_to_files": "kaoshi.api",
    "shuffle_exam": "kaoshi.api",
    "save_exam": "kaoshi.api",
    "finetune": "kaoshi.api",
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
        BackupResult,
        BenchmarkInfo,
        Board,
        CheckpointResult,
        Comparison,
        Contamination,
        DataError,
        EvalResult,
        FinetuneResult,
        InputError,
        JudgeOutcome,
        LoadedRun,
        MergeOutcome,
        Model,
        ModelError,
        ModelOptions,
        RenderedPrompt,
        RescoreOutcome,
        RunInfo,
        RunInterrupted,
        RunOptions,
        RunRecord,
        RunSpec,
        RunSummary,
        SampleRecord,
        SplitFiles,
        StoreCheck,
        StoreError,
        Tally,
        UnknownName,
        Vote,
        agreement,
        backup_store,
        check_store,
        checkpoint_store,
        compare,
        contamination,
        evaluate,
        finetune,
        judge,
        leaderboard,
        list_benchmarks,
        load_exam,
        load_model,
        load_run,
        merge,
        render_prompt,
        rescore,
        runs,
        save_exam,
        shuffle_exam,
        split_to_files,
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
    "BackupResult",
    "Benchmark",
    "BenchmarkInfo",
    "Board",
    "CheckpointResult",
    "Comparison",
    "Contamination",
    "DataError",
    "EvalResult",
    "Exam",
    "FinetuneResult",
    "InputError",
    "JudgeOutcome",
    "LoadResult",
    "LoadedRun",
    "MergeOutcome",
    "Model",
    "ModelError",
    "ModelOptions",
    "Question",
    "QuestionType",
    "RenderedPrompt",
    "RescoreOutcome",
    "RunInfo",
    "RunInterrupted",
    "RunOptions",
    "RunRecord",
    "RunSpec",
    "RunSummary",
    "SampleRecord",
    "SplitFiles",
    "StoreCheck",
    "StoreError",
    "Tally",
    "UnknownName",
    "Vote",
    "__version__",
    "agreement",
    "backup_store",
    "check_store",
    "checkpoint_store",
    "compare",
    "contamination",
    "evaluate",
    "finetune",
    "judge",
    "leaderboard",
    "list_benchmarks",
    "load_exam",
    "load_model",
    "load_run",
    "merge",
    "register_benchmark",
    "render_prompt",
    "rescore",
    "runs",
    "save_exam",
    "shuffle_exam",
    "split_to_files",
    "summarize",
    "vote",
]
