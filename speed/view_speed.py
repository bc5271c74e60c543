"""`kaoshi view` on big runs: time to first byte of the runs page, the samples page and filtered samples
pages (wrong answers, a text search, page 50) for stores of one run of 20,000 and of 200,000 samples.

The stores are C-Eval-like (5-shot prompts of ~600 characters; 55% right, 33% wrong, the rest unparsed,
ambiguous, errors or cut off; tests/support/view_stores.py), written in one transaction each. The viewer
runs in a thread of this process (kaoshi.view.start) and is asked over HTTP; the first request of a page is
"cold" (the viewer has kept nothing for that run), then the median of 5 more is "warm". The store files are
fresh, so the OS holds them in its page cache. Also the runs poll while another process writes a run into
the same store, one answer a commit; and, for reference, kaoshi.api.runs() (what `kaoshi runs` calls),
which reads every sample. Run: .venv/bin/python speed/view_speed.py (KAOSHI_BENCH_SIZES=20000,200000).
"""

from __future__ import annotations

import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from kaoshi.api import runs
from kaoshi.view import start
from kaoshi.view.urls import run_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.view_stores import write_big_run  # noqa: E402

SIZES = [int(n) for n in os.environ.get("KAOSHI_BENCH_SIZES", "20000,200000").split(",")]
WARM_REPEATS = 5
PAGES = [
    ("runs page `/`", "/"),
    ("runs poll `/api/runs`", "/api/runs"),
    ("samples page", run_url("big", "samples")),
    ("wrong answers", run_url("big", "samples", query=[("outcome", "wrong")])),
    ("text search `不太确定` (5% match)", run_url("big", "samples", query=[("q", "不太确定")])),
    ("text search, no match (every row read)", run_url("big", "samples", query=[("q", "无此文字")])),
    ("page 50", run_url("big", "samples", query=[("page", "50")])),
    ("wrong answers, page 50", run_url("big", "samples", query=[("outcome", "wrong"), ("page", "50")])),
    (
        "cut-off answers (1%) of one subject",
        run_url("big", "samples", query=[("outcome", "truncated"), ("subject", "科目07")]),
    ),
    ("one sample", run_url("big", "sample", "b012345")),
    ("run page (kaoshi's summary and plot)", run_url("big")),
]


def first_byte(address: tuple[str, int], path: str) -> float:
    """Seconds from sending the request to the status line (the page is rendered before it is sent)."""
    connection = http.client.HTTPConnection(*address, timeout=600)
    started = time.perf_counter()
    connection.request("GET", path)
    response = connection.getresponse()
    seconds = time.perf_counter() - started
    body = response.read()
    connection.close()
    assert response.status == 200, (path, response.status, body[:300])
    return seconds


def measure(size: int, folder: Path) -> list[tuple[str, float, float]]:
    store = folder / f"view-{size}.sqlite"
    started = time.perf_counter()
    write_big_run(store, "big", size)
    megabytes = store.stat().st_size / 2**20
    seconds = time.perf_counter() - started
    print(f"{size:,} samples: store written in {seconds:.1f} s ({megabytes:,.0f} MiB)")
    rows = []
    with start(store, announce=lambda _: None) as viewer:
        parts = urlsplit(viewer.url)
        address = (parts.hostname or "127.0.0.1", parts.port or 80)
        for label, path in PAGES:
            cold = first_byte(address, path)
            warm = statistics.median(first_byte(address, path) for _ in range(WARM_REPEATS))
            rows.append((label, cold, warm))
        rows.append(("runs poll while another process writes a run", *poll_while_writing(store, address)))
    started = time.perf_counter()
    runs(store=store)
    rows.append(("(reference) kaoshi.api.runs()", time.perf_counter() - started, float("nan")))
    return rows


# Another process writing run 'live' into the store, one committed answer at a time (as `kaoshi run` does).
_WRITER = """
import random, sys
sys.path.insert(0, sys.argv[2])
from kaoshi.store import Store
from tests.support.view_stores import big_sample, big_spec
rng = random.Random(1)
with Store(sys.argv[1]) as store:
    store.open_run("live", big_spec("live", 100_000))
    for i in range(100_000):
        store.add_sample("live", big_sample(i, rng))
"""


def poll_while_writing(store: Path, address: tuple[str, int]) -> tuple[float, float]:
    """/api/runs every 0.5 s for 5 s while the writer runs: the first poll, then the median of the rest."""
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(store), str(ROOT)])
    try:
        time.sleep(1.0)
        seconds = []
        for _ in range(10):
            seconds.append(first_byte(address, "/api/runs"))
            time.sleep(0.5)
    finally:
        writer.kill()
        writer.wait()
    return seconds[0], statistics.median(seconds[1:])


def main() -> None:
    results: dict[int, list[tuple[str, float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="kaoshi-view-speed-") as folder:
        for size in SIZES:
            results[size] = measure(size, Path(folder))
    header = " | ".join(f"{size:,}: cold / warm" for size in SIZES)
    print(f"\n| page | {header} |")
    print("| --- |" + " ---: |" * len(SIZES))
    for i, (label, _, _) in enumerate(results[SIZES[0]]):
        cells = []
        for size in SIZES:
            _, cold, warm = results[size][i]
            cells.append(f"{1000 * cold:,.0f} ms" + ("" if warm != warm else f" / {1000 * warm:,.0f} ms"))
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
