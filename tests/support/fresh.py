"""Python code run in a fresh interpreter with this checkout's kaoshi: what a command imports and prints
as it starts, away from what the test process has imported already."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def run_fresh(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -c code` in a fresh interpreter importing kaoshi from this checkout (its output as text)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout
    )
