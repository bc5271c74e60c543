"""A reply's reasoning is stored on its sample, written by `kaoshi samples` where set, shown folded by the
viewer, and never read for the answer; stores from before the column read it as None."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.models import ModelOptions
from kaoshi.store import Store
from tests.support.models import ReasoningModel
from tests.support.stores import SPEC, sample, sample_columns, store_from_before

EXAM = load_exam_result("sample").exam
IDS = [q.id for q in EXAM.questions]
REASONING = "先排除A，再看C：答案是C。"
LOCAL = "http://127.0.0.1:8000"


def _reasoning_run(store: Path, name: str, reasoned: list[str]) -> kaoshi.EvalResult:
    model = ReasoningModel("thinker", ModelOptions(), reasoned)
    return kaoshi.evaluate("sample", model=model, run_name=name, store=store)


def test_reasoning_is_stored_and_written_but_never_read_for_the_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite"
    reasoned = _reasoning_run(store, "r", IDS[:3])
    plain = _reasoning_run(store, "plain", [])
    shown = {s.question_id: s.reasoning for s in reasoned.samples if s.reasoning is not None}
    assert sorted(shown) == sorted(IDS[:3])
    assert all(text.startswith("<b>想一想</b>：答案是") for text in shown.values())
    # the reasoning argues for another answer: every answer, grade and number is the plain run's
    graded = {s.question_id: (s.status, s.answer, s.correct, s.score) for s in reasoned.samples}
    assert graded == {s.question_id: (s.status, s.answer, s.correct, s.score) for s in plain.samples}
    assert reasoned.summary.overall == plain.summary.overall

    assert main(["samples", "r", "--format", "jsonl", "--store", str(store)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["id"]: row["reasoning"] for row in rows if "reasoning" in row} == shown
    assert all(row["response"].startswith("答案：") for row in rows)


def test_a_store_from_before_the_column_reads_none_and_gains_it_on_writing(tmp_path: Path) -> None:
    path = store_from_before(tmp_path / "old.sqlite", "reasoning")
    with Store(path, read_only=True) as store:  # read-only: the file is not changed
        assert [s.reasoning for s in store.samples("old")] == [None, None]
    assert "reasoning" not in sample_columns(path)
    model = ReasoningModel("thinker", ModelOptions(), IDS[:1])
    kaoshi.evaluate("sample", model=model, limit_total=2, run_name="new", store=path)  # opens it to write
    assert "reasoning" in sample_columns(path)
    with Store(path, read_only=True) as store:
        assert [s.reasoning for s in store.samples("old")] == [None, None]
        assert [s.reasoning is not None for s in store.samples("new")] == [True, False]


def test_a_vote_over_reasoning_runs_has_no_reasoning(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    for name in ("a", "b", "c"):
        _reasoning_run(store, name, IDS)
    kaoshi.vote(["a", "b", "c"], store=store, run_name="v")  # asks no model: nothing reasoned
    assert all(s.reasoning is None for s in kaoshi.load_run("v", store=store).samples)


def test_the_viewer_shows_the_reasoning_folded_and_as_text(store_path: Path) -> None:
    testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
    from kaoshi.view import create_app

    with Store(store_path) as store:
        store.open_run("r", SPEC)
        store.add_sample("r", sample("q1", reasoning="<b>x</b> 答案是C"))
        store.add_sample("r", sample("q2"))
        store.finish_run("r")
    with testclient.TestClient(create_app(store_path), base_url=LOCAL) as client:
        page = client.get("/run/r/sample/q1").text
        other = client.get("/run/r/sample/q2").text
    assert (
        '<details id="reasoning"><summary>reasoning (13 characters)</summary>'
        "<pre>&lt;b&gt;x&lt;/b&gt; 答案是C</pre></details>"
    ) in page
    assert "<b>x</b>" not in page
    assert 'id="reasoning"' not in other
