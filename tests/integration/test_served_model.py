"""A reply whose `model` differs from the one asked for (a gateway routed it) is recorded on its sample,
kept by the store, and named once in the run's report; stores from before the column read it as None."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.models import ModelOptions
from kaoshi.store import Store
from tests.support.models import RoutedModel
from tests.support.stores import sample_columns, store_from_before

EXAM = load_exam_result("sample").exam
ROUTED = "gpt-4o-mini-2024-07-18"


def test_a_routed_reply_is_recorded_and_named_once_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [q.id for q in EXAM.questions]
    routed = {ROUTED: ids[:3], "gpt-3.5-turbo": ids[3:4]}
    store = tmp_path / "s.sqlite"
    model = RoutedModel("gateway:gpt-4o", ModelOptions(), routed)
    result = kaoshi.evaluate("sample", model=model, run_name="r", store=store)
    assert {s.question_id: s.served_model for s in result.samples if s.served_model} == {
        **dict.fromkeys(ids[:3], ROUTED),
        ids[3]: "gpt-3.5-turbo",
    }
    assert result.summary.served_models == {ROUTED: 3, "gpt-3.5-turbo": 1}

    note = (
        f"4 of {len(ids)} replies were served by another model than gateway:gpt-4o: {ROUTED} (3), "
        "gpt-3.5-turbo (1)"
    )
    assert main(["report", "r", "--format", "md", "--store", str(store)]) == 0
    text = capsys.readouterr().out
    assert text.count("served by another model") == 1 and note in text
    assert main(["report", "r", "--format", "json", "--store", str(store)]) == 0
    assert json.loads(capsys.readouterr().out)["served_models"] == {ROUTED: 3, "gpt-3.5-turbo": 1}
    assert main(["samples", "r", "--format", "jsonl", "--store", str(store)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["id"]: row["served_model"] for row in rows if "served_model" in row} == {
        **dict.fromkeys(ids[:3], ROUTED),
        ids[3]: "gpt-3.5-turbo",
    }


def test_no_note_and_no_key_when_every_reply_came_from_the_asked_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite"
    model = RoutedModel("gateway:gpt-4o", ModelOptions(), {})
    kaoshi.evaluate("sample", model=model, run_name="r", store=store)
    assert main(["report", "r", "--store", str(store)]) == 0
    assert "served by another model" not in capsys.readouterr().out
    assert main(["report", "r", "--format", "json", "--store", str(store)]) == 0
    assert "served_models" not in json.loads(capsys.readouterr().out)


def test_a_store_from_before_the_column_reads_none_and_gains_it_on_writing(tmp_path: Path) -> None:
    path = store_from_before(tmp_path / "old.sqlite", "served_model")
    with Store(path, read_only=True) as store:  # read-only: the file is not changed
        assert [s.served_model for s in store.samples("old")] == [None, None]
    assert "served_model" not in sample_columns(path)
    routed = {ROUTED: [q.id for q in EXAM.questions[:1]]}
    model = RoutedModel("gateway:gpt-4o", ModelOptions(), routed)
    kaoshi.evaluate("sample", model=model, limit_total=2, run_name="new", store=path)  # opens it to write
    assert "served_model" in sample_columns(path)
    with Store(path, read_only=True) as store:
        assert [s.served_model for s in store.samples("old")] == [None, None]
        assert [s.served_model for s in store.samples("new")] == [ROUTED, None]


def test_a_vote_over_routed_runs_names_no_served_model(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    ids = [q.id for q in EXAM.questions]
    for name in ("a", "b", "c"):
        model = RoutedModel("gateway:gpt-4o", ModelOptions(), {ROUTED: ids})
        kaoshi.evaluate("sample", model=model, run_name=name, store=store)
    kaoshi.vote(["a", "b", "c"], store=store, run_name="v")  # asks no model: nothing was routed
    voted = kaoshi.summarize("v", store=store)
    assert voted.served_models == {}
    assert all(s.served_model is None for s in kaoshi.load_run("v", store=store).samples)
