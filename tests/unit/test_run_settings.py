"""What a run was is shown where its numbers are (issue 30, points 6 and 9): the settings in `kaoshi runs`,
every JSON report and next to the numbers; a benchmark's reports show its own statistics; "best" is only
marked over the same questions."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.benchmarks import get_benchmark
from kaoshi.report.compare import comparison_tables
from kaoshi.report.render import render_summary, run_tables
from kaoshi.results.aggregate import summarize
from kaoshi.results.metric import measured
from kaoshi.store.settings import compact_settings, describe_settings
from tests.support.runs import cli
from tests.support.stores import REPORT_SAMPLES, SPEC, sample

VAL_5SHOT = replace(SPEC, split="val", shots=5, chat=True, prompt="ceval-answer-only", prompt_version=2)


@pytest.mark.parametrize(
    ("spec", "compact", "described"),
    [
        (SPEC, "0-shot · no chat · default v1 · 256 tokens", "no chat template (plain completion)"),
        (VAL_5SHOT, "val · 5-shot · chat · ceval-answer-only v2 · 256 tokens · seed 0", "· chat template ·"),
        (
            replace(SPEC, max_new_tokens_open=1024),
            "0-shot · no chat · default v1 · 256/1024 tokens",
            "256 new tokens (1024 for open answers)",
        ),
        (replace(SPEC, method="loglik"), "0-shot · no chat · default v1", "default v1"),
        (replace(SPEC, limit_per_subject=3), "256 tokens · first 3/subject", "first 3/subject"),
        (replace(SPEC, limit=30), "256 tokens · first 30", "first 30"),
        (replace(SPEC, system="你是考生"), "default v1 · system prompt · 256", "system prompt"),
        (replace(SPEC, shuffle_seed=7), "options shuffled (seed 7)", "seed 7"),
        (replace(SPEC, method="vote", members=("a", "b", "c")), "vote of 3 runs", "vote of 3 runs"),
    ],
)
def test_settings_in_a_few_words(spec: object, compact: str, described: str) -> None:
    assert compact in compact_settings(spec)  # type: ignore[arg-type]
    assert described in describe_settings(spec)  # type: ignore[arg-type]


def test_the_chat_choice_is_stated_next_to_the_numbers() -> None:
    summary = replace(summarize("r", REPORT_SAMPLES, ["domain"]), spec=VAL_5SHOT)
    overall = run_tables(summary)[0]
    assert overall.note.startswith("settings: val · 5-shot · chat template · ceval-answer-only v2")
    document = json.loads(render_summary(summary, "json"))
    assert document["settings"] == compact_settings(VAL_5SHOT)
    assert document["spec"]["chat"] is True and document["spec"]["shots"] == 5


@pytest.mark.parametrize(
    ("benchmark", "f1_column", "metric_labels"),
    [
        (None, False, set()),  # a summary made without its benchmark: what every exam has
        ("qualbench", True, {"F1 (QualBench", "weighted F1"}),
        ("cmexam", False, {"weighted F1"}),
        ("ceval", False, set()),
        ("cmmlu", False, set()),
    ],
)
def test_a_benchmarks_report_shows_its_own_statistics(
    benchmark: str | None, f1_column: bool, metric_labels: set[str]
) -> None:
    """What a report shows beyond what every exam has comes from the metrics the run's benchmark
    declares (Benchmark.metrics), rendered from what they measured."""
    metrics = () if benchmark is None else get_benchmark(benchmark).metrics
    summary = measured(summarize("r", REPORT_SAMPLES, ["domain"]), metrics)
    tables = {t.title.split(" — ")[1]: t for t in run_tables(summary)}
    assert ("F1" in tables["overall"].headers) is f1_column
    assert ("F1" in tables["by domain"].headers) is f1_column
    assert all(len(row) == len(tables["by domain"].headers) for row in tables["by domain"].rows)
    labels = [row[0] for row in tables["metrics"].rows]
    shown = {
        prefix for prefix in ("F1 (QualBench", "weighted F1") if any(x.startswith(prefix) for x in labels)
    }
    assert shown == metric_labels
    document = summary.to_json()
    # a tally holds what every exam has; a benchmark's numbers are under its metrics, by label
    assert "f1_qualbench" not in document and "f1_qualbench" not in json.dumps(document["groups"])
    assert set(document.get("benchmark_metrics", {})) == {m.label for m in summary.measurements}


def test_best_is_marked_only_over_the_same_questions() -> None:
    right = [sample(f"q{i}", qtype="single", gold=frozenset("A"), answer=frozenset("A")) for i in range(4)]
    wrong = [replace(s, answer=frozenset("B"), correct=False, score=0.0) for s in right]
    same = [summarize("a", right, ["domain"]), summarize("b", wrong, ["domain"])]
    assert any(t.best for t in comparison_tables(same, []))
    other_questions = [summarize("a", right[:2], ["domain"]), summarize("b", wrong[2:], ["domain"])]
    tables = comparison_tables(other_questions, [])
    assert not any(t.best for t in tables)
    assert "no best marked: the runs were scored on different questions" in tables[0].note


def test_kaoshi_runs_shows_the_settings_and_json_carries_the_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.sqlite")
    cli(
        capsys,
        "run",
        "--benchmark",
        "ceval",
        "--data",
        str(_ceval(tmp_path)),
        "--model",
        "random",
        "--store",
        store,
    )
    capsys.readouterr()
    (row,) = json.loads(cli(capsys, "runs", "--format", "json", "--store", store))
    assert row["settings"] == compact_settings(replace(SPEC, **_spec_fields(row["spec"])))
    assert row["spec"]["benchmark"] == "ceval" and row["spec"]["prompt"]
    table = cli(capsys, "runs", "--store", store)
    assert "settings" in table and "no chat" in table
    report = json.loads(cli(capsys, "report", row["run"], "--format", "json", "--store", store))
    assert report["settings"] == row["settings"] and report["spec"] == row["spec"]
    text = cli(capsys, "report", row["run"], "--store", store)
    assert "no chat template (plain completion)" in text
    assert "F1" not in text  # C-Eval reports no QualBench F1


def _spec_fields(stored: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in stored.items() if k in SPEC.to_json() and k not in ("exemplars", "members")}


def _ceval(tmp_path: Path) -> Path:
    folder = tmp_path / "ceval" / "val"
    folder.mkdir(parents=True)
    rows = ["id,question,A,B,C,D,answer"]
    rows += [f"{i},题目{i}：下列哪一项正确？,甲,乙,丙,丁,{'ABCD'[i % 4]}" for i in range(4)]
    (folder / "computer_network_val.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tmp_path / "ceval"


def test_a_summary_read_without_its_outcomes_reports_the_same(tmp_path: Path) -> None:
    """`kaoshi report RUN` reads a run without its per-question outcomes (it never pairs them): the same
    report in every format, with less read."""
    import kaoshi
    from kaoshi.api.summary import summarize as stored_summary

    store = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", "random", store=store, run_name="r")
    whole, bare = stored_summary("r", store=store), stored_summary("r", store=store, outcomes=False)
    assert whole.outcomes and bare.outcomes == {}
    for fmt in ("table", "md", "json", "csv"):
        assert render_summary(bare, fmt) == render_summary(whole, fmt)
