"""kaoshi's public API: every capability of the command line as a typed function (the CLI calls these)."""

from kaoshi.api.evaluation import EvalResult, RunInterrupted, evaluate, load_model
from kaoshi.api.exams import load_exam
from kaoshi.api.summary import LoadedRun, load_run, summarize
from kaoshi.runner.prepare import RunOptions

__all__ = [
    "EvalResult",
    "LoadedRun",
    "RunInterrupted",
    "RunOptions",
    "evaluate",
    "load_exam",
    "load_model",
    "load_run",
    "summarize",
]
