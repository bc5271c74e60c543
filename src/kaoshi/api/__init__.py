"""kaoshi's public API: every capability of the command line as a typed function (the CLI calls these)."""

from kaoshi.api.boards import leaderboard
from kaoshi.api.evaluation import EvalResult, RunInterrupted, evaluate, load_model
from kaoshi.api.exam_files import SplitFiles, save_exam, shuffle_exam, split_to_files
from kaoshi.api.exams import load_exam, load_exam_result
from kaoshi.api.grading_agreement import agreement
from kaoshi.api.judging import judge
from kaoshi.api.merging import merge
from kaoshi.api.prompts import RenderedPrompt, render_prompt
from kaoshi.api.rescoring import rescore
from kaoshi.api.store_tools import (
    BackupResult,
    CheckpointResult,
    StoreCheck,
    backup_store,
    check_store,
    checkpoint_store,
)
from kaoshi.api.studies import Comparison, Contamination, Vote, compare, contamination, vote
from kaoshi.api.summary import (
    LoadedRun,
    RunInfo,
    export_run,
    load_run,
    runs,
    stored_samples,
    summarize,
)
from kaoshi.api.training import FinetuneResult, finetune
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.errors import InputError, UnknownName
from kaoshi.models.base import Model, ModelError, ModelOptions
from kaoshi.report.aggregate import RunSummary, Tally
from kaoshi.report.agreement import AgreementReport
from kaoshi.report.leaderboard import Board
from kaoshi.runner.judge import JudgeOutcome
from kaoshi.runner.prepare import RunOptions
from kaoshi.runner.rescore import RescoreOutcome
from kaoshi.runner.shards import MergeOutcome, parse_shard
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

__all__ = [
    "AgreementReport",
    "BackupResult",
    "Board",
    "CheckpointResult",
    "Comparison",
    "Contamination",
    "DataError",
    "EvalResult",
    "FinetuneResult",
    "GradeRecord",
    "InputError",
    "JudgeOutcome",
    "LoadResult",
    "LoadedRun",
    "MergeOutcome",
    "Model",
    "ModelError",
    "ModelOptions",
    "RenderedPrompt",
    "RescoreOutcome",
    "RunInfo",
    "RunInterrupted",
    "RunOptions",
    "RunRecord",
    "RunSpec",
    "RunStatus",
    "RunSummary",
    "SampleRecord",
    "SampleStatus",
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
    "compare",
    "contamination",
    "default_store_path",
    "evaluate",
    "export_run",
    "finetune",
    "judge",
    "leaderboard",
    "load_exam",
    "load_exam_result",
    "load_model",
    "load_run",
    "merge",
    "parse_shard",
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
]
