"""The viewer's run page shows what the run's outputs look like, the same profile `kaoshi report` prints,
read from the columns it needs (never a prompt), and nothing where there is nothing to say."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest

from kaoshi.analysis.outputs import TAIL_CHARS, output_profile
from kaoshi.api.summary import load_run
from kaoshi.report.outputs import output_phrases
from kaoshi.store.columns import score_rows
from kaoshi.view import create_app
from kaoshi.view.queries import reading
from kaoshi.view.urls import run_url
from tests.support.output_runs import output_run

testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
LOCAL = "http://127.0.0.1:8000"
GOLDEN_STORE = Path(__file__).resolve().parents[1] / "golden" / "store.sqlite"


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_run_page_shows_the_outputs(tmp_path: Path) -> None:
    store = output_run(tmp_path / "s.sqlite", tmp_path / "script.jsonl")
    with testclient.TestClient(create_app(store), base_url=LOCAL) as client:
        page = client.get(run_url("outputs"))
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "Outputs" in shown
    for phrase in (
        "43 answers, 1 error left out",
        "tokens out p50 30 / p90 30 / p99 512 / max 512",
        "reasoning tokens p50 20 / p90 20 / p99 502 / max 502",
        "cut off at the budget 2 (4.7%)",
        "looping to the budget 1 (2.3%)",
        "tokens 8,600 in / 2,254 out",
        "model time 0.43 s (0.01 s an answer)",
        "loops: answers cut off at the budget whose last characters are one unit of 1 to 200 characters",
    ):
        assert phrase in shown


def test_the_viewer_reads_the_reports_profile_without_prompts(tmp_path: Path) -> None:
    store = output_run(tmp_path / "s.sqlite", tmp_path / "script.jsonl")
    statements: list[str] = []
    with reading(store) as db:
        db.set_trace_callback(statements.append)
        rows = list(score_rows(db, store, "outputs", text_end=TAIL_CHARS))
        rows += score_rows(db, store, "outputs", repeats=True, text_end=TAIL_CHARS)
    assert output_profile(rows) == load_run("outputs", store=store).summarize().outputs
    assert statements and not any("prompt" in statement for statement in statements)


@pytest.mark.parametrize("run", ["sample-good", "sample-loglik", "sample-vote"])
def test_a_store_from_before_the_columns(tmp_path: Path, run: str) -> None:
    """The golden store predates `reasoning`, `tokens_reasoning` and k samples: read as their defaults."""
    store = tmp_path / "store.sqlite"
    shutil.copyfile(GOLDEN_STORE, store)
    with reading(store) as db:
        profile = output_profile(score_rows(db, store, run, text_end=TAIL_CHARS))
    assert profile == load_run(run, store=store).summarize().outputs
    assert output_phrases(profile) == []


def test_nothing_to_say_no_section(two_runs: Path) -> None:
    with testclient.TestClient(create_app(two_runs), base_url=LOCAL) as client:
        page = client.get(run_url("strong"))
    assert page.status_code == 200 and "Outputs" not in text_of(page.text)
