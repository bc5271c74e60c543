"""Running an exam against a model into the store."""

from kaoshi.runner.run import METHODS, RunOutcome, execute_run, plan_run

__all__ = ["METHODS", "RunOutcome", "execute_run", "plan_run"]
