"""The reporting commands whose output from the golden store is kept (tests/golden/expected/NAME.txt)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SAMPLE = ["sample-good", "sample-poor", "sample-random", "sample-loglik", "sample-poor-partial"]
SAMPLE += ["sample-vote"]

COMMANDS: dict[str, list[str]] = {
    "runs": ["runs", "--format", "json"],
    "report-good-json": ["report", "sample-good", "--format", "json"],
    "report-good-by-type-md": ["report", "sample-good", "--by", "type", "--by", "domain", "--format", "md"],
    "report-good-table": ["report", "sample-good", "--by", "type"],
    "report-sample-compare-md": ["report", *SAMPLE, "--by", "type", "--format", "md", "--resamples", "200"],
    "report-sample-compare-json": ["report", *SAMPLE, "--format", "json", "--resamples", "200"],
    "report-loglik-csv": ["report", "sample-loglik", "--by", "subject", "--format", "csv"],
    "report-partial-latex": ["report", "sample-poor-partial", "--by", "type", "--format", "latex"],
    "report-ceval-category": ["report", "ceval-random", "ceval-b", "--by", "category", "--format", "md"],
    "report-ceval-subject-json": ["report", "ceval-random", "--by", "subject", "--format", "json"],
    "report-cmmlu-json": ["report", "cmmlu-random", "cmmlu-c", "--by", "category", "--format", "json"],
    "leaderboard-md": ["leaderboard", "--format", "md"],
    "leaderboard-json": ["leaderboard", "--format", "json"],
    "leaderboard-ceval-csv": ["leaderboard", "--benchmark", "ceval", "--format", "csv"],
    "compare-md": ["compare", *SAMPLE[:3], "--by", "type", "--format", "md", "--resamples", "200"],
    "samples-good": ["samples", "sample-good", "--format", "jsonl"],
    "samples-vote": ["samples", "sample-vote"],
    "samples-ceval": ["samples", "ceval-b", "--format", "jsonl"],
    "html": ["html", "sample-good", "sample-poor", "--by", "type", "-o", "{out}/report.html"],
}


def kaoshi_command() -> list[str]:
    script = Path(sys.executable).with_name("kaoshi")
    return [str(script)] if script.exists() else [shutil.which("kaoshi") or "kaoshi"]


def run_command(args: list[str], store: Path, out: Path) -> bytes:
    """The command's stdout, exit code and (for a command writing a file) the file, as bytes."""
    env = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb"}
    args = [a.replace("{out}", str(out)) for a in args]
    done = subprocess.run([*kaoshi_command(), *args, "--store", str(store)], capture_output=True, env=env)
    result = done.stdout + f"\n[exit {done.returncode}]\n".encode()
    written = [Path(a) for a in args if a.startswith(str(out)) and a.endswith((".json", ".html"))]
    for path in written:
        # the report names when and from which store it was made: the two facts a re-report changes
        text = re.sub(rb"generated [0-9T:-]+", b"generated <time>", path.read_bytes())
        result += b"[file]\n" + text.replace(str(store).encode(), b"<store>")
        path.unlink()
    return result
