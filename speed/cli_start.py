"""Start-up time of the command line: `kaoshi --help` and `kaoshi run --help` as fresh processes.

Each case is run once as the first (cold-ish: the OS file cache is whatever the machine holds) and then
RUNS times (warm: the median is printed). Peers in the same run: the parser with every command
registered (what `kaoshi --help` built before commands were imported lazily), `import kaoshi`, and the
bare interpreter. Run: .venv/bin/python speed/cli_start.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = int(os.environ.get("KAOSHI_BENCH_RUNS", "10"))
SCRIPT = Path(sys.executable).parent / "kaoshi"  # the console script (pyproject: kaoshi.cli.main:main)
KAOSHI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "kaoshi.cli.main"]
ALL_COMMANDS = "from kaoshi.cli.main import build_parser; build_parser().parse_args(['--help'])"

CASES = {
    "kaoshi --help": [*KAOSHI, "--help"],
    "kaoshi run --help": [*KAOSHI, "run", "--help"],
    "--help, every command imported": [sys.executable, "-c", ALL_COMMANDS],
    "python -c 'import kaoshi'": [sys.executable, "-c", "import kaoshi"],
    "python -c pass": [sys.executable, "-c", "pass"],
}


def wall_time(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, COLUMNS="80"))
    return time.perf_counter() - start


def main() -> None:
    print(f"{'case':34} {'first':>8} {'median':>8}   ({RUNS} warm runs)")
    for name, args in CASES.items():
        first = wall_time(args)
        warm = statistics.median(wall_time(args) for _ in range(RUNS))
        print(f"{name:34} {first:7.3f}s {warm:7.3f}s")


if __name__ == "__main__":
    main()
