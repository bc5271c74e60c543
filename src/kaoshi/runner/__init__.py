"""Running an exam against a model into the store.

Names are imported on first use: a command that reads a run's settings (kaoshi.runner.config) does not
import the run pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "METHODS": "kaoshi.runner.samples",
    **{name: "kaoshi.runner.run" for name in ("RunOutcome", "execute_run", "plan_run")},
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kaoshi.runner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from kaoshi.runner.run import RunOutcome, execute_run, plan_run
    from kaoshi.runner.samples import METHODS

__all__ = ["METHODS", "RunOutcome", "execute_run", "plan_run"]
