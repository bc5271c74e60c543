"""kaoshi's public API: every capability of the command line as a typed function (the CLI calls these)."""

from kaoshi.api.evaluation import EvalResult, RunInterrupted, evaluate, load_model
from kaoshi.api.exams import load_exam
from kaoshi.api.judging import judge
from kaoshi.api.rescoring import rescore
from kaoshi.api.studies import Comparison, Contamination, Vote, compare, contamination, vote
from kaoshi.api.summary import LoadedRun, load_run, summarize
from kaoshi.runner.judge import JudgeOutcome
from kaoshi.runner.prepare import RunOptions
from kaoshi.runner.rescore import RescoreOutcome

__all__ = [
    "Comparison",
    "Contamination",
    "EvalResult",
    "JudgeOutcome",
    "LoadedRun",
    "RescoreOutcome",
    "RunInterrupted",
    "RunOptions",
    "Vote",
    "compare",
    "contamination",
    "evaluate",
    "judge",
    "load_exam",
    "load_model",
    "load_run",
    "rescore",
    "summarize",
    "vote",
]
