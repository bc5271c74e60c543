"""Running an exam against a model into the store.

Names are imported on first use: a command that reads a run's settings (kaoshi.runner.config) does not
import the run pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

_EXPORTS = {
    "METHODS": "kaoshi.runner.samples",
    **{name: "kaoshi.runner.run" for name in ("RunOutcome", "execute_run", "plan_run")},
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


if TYPE_CHECKING:
    from kaoshi.runner.run import RunOutcome, execute_run, plan_run
    from kaoshi.runner.samples import METHODS

__all__ = ["METHODS", "RunOutcome", "execute_run", "plan_run"]
