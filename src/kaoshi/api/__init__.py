"""kaoshi's public API: every capability of the command line as a typed function (the CLI calls these).

Names are imported on first use, so a command imports only what it calls (`kaoshi report` does not load
the fine-tuning or Ray code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

# public name -> the module that defines it
_EXPORTS = {
    "BenchmarkInfo": "kaoshi.api.catalog",
    "list_benchmarks": "kaoshi.api.catalog",
    "BackendInfo": "kaoshi.models.catalog",
    "list_backends": "kaoshi.models.catalog",
    "model_spec_help": "kaoshi.models.catalog",
    "AgreementReport": "kaoshi.report.agreement",
    "BackendKeywords": "kaoshi.runner.keywords",
    "BackupResult": "kaoshi.api.store_tools",
    "Board": "kaoshi.report.leaderboard",
    "CheckpointResult": "kaoshi.api.store_tools",
    "CompactResult": "kaoshi.api.store_tools",
    "Comparison": "kaoshi.api.studies",
    "Contamination": "kaoshi.api.studies",
    "DataError": "kaoshi.data.errors",
    "EvalResult": "kaoshi.api.evaluation",
    "FinetuneResult": "kaoshi.api.training",
    "GradeRecord": "kaoshi.store",
    "HtmlReport": "kaoshi.api.html_report",
    "InputError": "kaoshi.errors",
    "JudgeOutcome": "kaoshi.runner.judge",
    "LoadResult": "kaoshi.data.collect",
    "LoadedRun": "kaoshi.api.summary",
    "MergeOutcome": "kaoshi.runner.shards",
    "Model": "kaoshi.models.base",
    "ModelError": "kaoshi.models.errors",  # not .base: the command line imports it to tell bad input apart
    "ModelOptions": "kaoshi.models.base",
    "RemovedRun": "kaoshi.api.store_tools",
    "RenamedRun": "kaoshi.api.store_tools",
    "RenderedPrompt": "kaoshi.api.prompts",
    "RescoreOutcome": "kaoshi.runner.rescore",
    "RunConfig": "kaoshi.runner.config",
    "RunInfo": "kaoshi.api.summary",
    "RunInterrupted": "kaoshi.api.evaluation",
    "RunKeywords": "kaoshi.runner.keywords",
    "RunRecord": "kaoshi.store",
    "RunSpec": "kaoshi.store",
    "RunStatus": "kaoshi.store",
    "RunSummary": "kaoshi.results.aggregate",
    "SampleRecord": "kaoshi.store",
    "SampleStatus": "kaoshi.store",
    "ScoreRow": "kaoshi.store.columns",
    "ScoredRun": "kaoshi.api.summary",
    "SplitFiles": "kaoshi.api.exam_files",
    "Store": "kaoshi.store",
    "StoreCheck": "kaoshi.api.store_tools",
    "StoreError": "kaoshi.store",
    "Tally": "kaoshi.results.tally",
    "UnknownName": "kaoshi.errors",
    "Vote": "kaoshi.api.studies",
    "agreement": "kaoshi.api.grading_agreement",
    "backup_store": "kaoshi.api.store_tools",
    "check_store": "kaoshi.api.store_tools",
    "checkpoint_store": "kaoshi.api.store_tools",
    "compact_store": "kaoshi.api.store_tools",
    "compare": "kaoshi.api.studies",
    "contamination": "kaoshi.api.studies",
    "default_store_path": "kaoshi.store",
    "evaluate": "kaoshi.api.evaluation",
    "export_run": "kaoshi.api.summary",
    "finetune": "kaoshi.api.training",
    "graded_samples": "kaoshi.api.summary",
    "judge": "kaoshi.api.judging",
    "leaderboard": "kaoshi.api.boards",
    "load_exam": "kaoshi.api.exams",
    "load_exam_result": "kaoshi.benchmarks.loading",
    "load_model": "kaoshi.api.evaluation",
    "load_run": "kaoshi.api.summary",
    "load_scores": "kaoshi.api.summary",
    "merge": "kaoshi.api.merging",
    "parse_shard": "kaoshi.runner.shards",
    "remove_runs": "kaoshi.api.store_tools",
    "rename_run": "kaoshi.api.store_tools",
    "render_prompt": "kaoshi.api.prompts",
    "require_store_file": "kaoshi.store",
    "rescore": "kaoshi.api.rescoring",
    "runs": "kaoshi.api.summary",
    "save_exam": "kaoshi.api.exam_files",
    "shuffle_exam": "kaoshi.api.exam_files",
    "split_to_files": "kaoshi.api.exam_files",
    "stored_samples": "kaoshi.api.summary",
    "summarize": "kaoshi.api.summary",
    "vote": "kaoshi.api.studies",
    "write_html_report": "kaoshi.api.html_report",
}

if TYPE_CHECKING:
    from kaoshi.api.boards import (
        leaderboard,
    )
    from kaoshi.api.catalog import BenchmarkInfo, list_benchmarks
    from kaoshi.api.evaluation import (
        EvalResult,
        RunInterrupted,
        evaluate,
        load_model,
    )
    from kaoshi.api.exam_files import (
        SplitFiles,
        save_exam,
        shuffle_exam,
        split_to_files,
    )
    from kaoshi.api.exams import (
        load_exam,
    )
    from kaoshi.api.grading_agreement import (
        agreement,
    )
    from kaoshi.api.html_report import (
        HtmlReport,
        write_html_report,
    )
    from kaoshi.api.judging import (
        judge,
    )
    from kaoshi.api.merging import (
        merge,
    )
    from kaoshi.api.prompts import (
        RenderedPrompt,
        render_prompt,
    )
    from kaoshi.api.rescoring import (
        rescore,
    )
    from kaoshi.api.store_tools import (
        BackupResult,
        CheckpointResult,
        CompactResult,
        RemovedRun,
        RenamedRun,
        StoreCheck,
        backup_store,
        check_store,
        checkpoint_store,
        compact_store,
        remove_runs,
        rename_run,
    )
    from kaoshi.api.studies import (
        Comparison,
        Contamination,
        Vote,
        compare,
        contamination,
        vote,
    )
    from kaoshi.api.summary import (
        LoadedRun,
        RunInfo,
        ScoredRun,
        export_run,
        graded_samples,
        load_run,
        load_scores,
        runs,
        stored_samples,
        summarize,
    )
    from kaoshi.api.training import (
        FinetuneResult,
        finetune,
    )
    from kaoshi.benchmarks.loading import (
        load_exam_result,
    )
    from kaoshi.data.collect import (
        LoadResult,
    )
    from kaoshi.data.errors import (
        DataError,
    )
    from kaoshi.errors import (
        InputError,
        UnknownName,
    )
    from kaoshi.models.base import (
        Model,
        ModelError,
        ModelOptions,
    )
    from kaoshi.models.catalog import BackendInfo, list_backends, model_spec_help
    from kaoshi.report.agreement import (
        AgreementReport,
    )
    from kaoshi.report.leaderboard import (
        Board,
    )
    from kaoshi.results.aggregate import (
        RunSummary,
    )
    from kaoshi.results.tally import (
        Tally,
    )
    from kaoshi.runner.config import (
        RunConfig,
    )
    from kaoshi.runner.judge import (
        JudgeOutcome,
    )
    from kaoshi.runner.keywords import (
        BackendKeywords,
        RunKeywords,
    )
    from kaoshi.runner.rescore import (
        RescoreOutcome,
    )
    from kaoshi.runner.shards import (
        MergeOutcome,
        parse_shard,
    )
    from kaoshi.store import (
        GradeRecord,
        RunRecord,
        RunSpec,
        RunStatus,
        SampleRecord,
        SampleStatus,
        Store,
        StoreError,
        default_store_path,
        require_store_file,
    )
    from kaoshi.store.columns import (
        ScoreRow,
    )


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = [
    "AgreementReport",
    "BackendInfo",
    "BackendKeywords",
    "BackupResult",
    "BenchmarkInfo",
    "Board",
    "CheckpointResult",
    "CompactResult",
    "Comparison",
    "Contamination",
    "DataError",
    "EvalResult",
    "FinetuneResult",
    "GradeRecord",
    "HtmlReport",
    "InputError",
    "JudgeOutcome",
    "LoadResult",
    "LoadedRun",
    "MergeOutcome",
    "Model",
    "ModelError",
    "ModelOptions",
    "RemovedRun",
    "RenamedRun",
    "RenderedPrompt",
    "RescoreOutcome",
    "RunConfig",
    "RunInfo",
    "RunInterrupted",
    "RunKeywords",
    "RunRecord",
    "RunSpec",
    "RunStatus",
    "RunSummary",
    "SampleRecord",
    "SampleStatus",
    "ScoreRow",
    "ScoredRun",
    "SplitFiles",
    "Store",
    "StoreCheck",
    "StoreError",
    "Tally",
    "UnknownName",
    "Vote",
    "agreement",
    "backup_store",
    "check_store",
    "checkpoint_store",
    "compact_store",
    "compare",
    "contamination",
    "default_store_path",
    "evaluate",
    "export_run",
    "finetune",
    "graded_samples",
    "judge",
    "leaderboard",
    "list_backends",
    "list_benchmarks",
    "load_exam",
    "load_exam_result",
    "load_model",
    "load_run",
    "load_scores",
    "merge",
    "model_spec_help",
    "parse_shard",
    "remove_runs",
    "rename_run",
    "render_prompt",
    "require_store_file",
    "rescore",
    "runs",
    "save_exam",
    "shuffle_exam",
    "split_to_files",
    "stored_samples",
    "summarize",
    "vote",
    "write_html_report",
]
