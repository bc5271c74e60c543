"""kaoshi's public API: every capability of the command line as a typed function (the CLI calls these)."""

from kaoshi.api.evaluation import EvalResult, RunInterrupted, evaluate
from kaoshi.api.summary import LoadedRun, load_run, summarize
from kaoshi.runner.prepare import RunOptions

__all__ = ["EvalResult", "LoadedRun", "RunInterrupted", "RunOptions", "evaluate", "load_run", "summarize"]
