"""kaoshi's public API: every capability of the command line as a typed function (the CLI calls these)."""

from kaoshi.api.boards import leaderboard
from kaoshi.api.evaluation import EvalResult, RunInterrupted, evaluate, load_model
from kaoshi.api.exams import load_exam
from kaoshi.api.grading_agreement import agreement
from kaoshi.api.judging import judge
from kaoshi.api.merging import merge
from kaoshi.api.prompts import RenderedPrompt, render_prompt
from kaoshi.api.rescoring import rescore
from kaoshi.api.store_tools import backup_store, check_store, checkpoint_store
from kaoshi.api.studies import Comparison, Contamination, Vote, compare, contamination, vote
from kaoshi.api.summary import LoadedRun, RunInfo, load_run, runs, summarize
from kaoshi.report.agreement import AgreementReport
from kaoshi.runner.judge import JudgeOutcome
from kaoshi.runner.prepare import RunOptions
from kaoshi.runner.rescore import RescoreOutcome

__all__ = [
    "AgreementReport",
    "Comparison",
    "Contamination",
    "EvalResult",
    "JudgeOutcome",
    "LoadedRun",
    "RenderedPrompt",
    "RescoreOutcome",
    "RunInfo",
    "RunInterrupted",
    "RunOptions",
    "Vote",
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
    "render_prompt",
    "rescore",
    "runs",
    "summarize",
    "vote",
]
