"""`kaoshi runs` counts with SQLite (issue 42): the counts equal what run_coverage and the summary's tally
make from the samples, on the golden store and on rows with every status, errors, open answers and k
samples a question."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from pathlib import Path

from kaoshi.api.summary import runs
from kaoshi.results.aggregate import summarize
from kaoshi.store import Store, run_coverage
from kaoshi.store.records import SampleStatus
from tests.support.stores import SPEC, sample

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "store.sqlite"


def from_the_samples(path: Path) -> dict[str, tuple[object, float | None]]:
    """What runs() showed before it counted with SQL: coverage and accuracy from every sample read."""
    found = {}
    with Store(path, read_only=True) as store:
        for record in store.runs():
            firsts = list(store.iter_samples(record.name))
            every = store.all_samples(record.name) if record.spec.repeats > 1 else firsts
            accuracy = summarize(record.name, every, []).overall.accuracy
            found[record.name] = (run_coverage(record, firsts), accuracy)
    return found


def test_the_golden_stores_counts_are_the_samples(tmp_path: Path) -> None:
    copy = tmp_path / "golden.sqlite"
    shutil.copyfile(GOLDEN, copy)
    listed = {info.run.name: (info.coverage, info.accuracy) for info in runs(store=copy)}
    assert listed == from_the_samples(copy) and len(listed) >= 3


def test_hand_made_rows_with_every_outcome_count_the_same(tmp_path: Path) -> None:
    rng = random.Random(4)
    path = tmp_path / "s.sqlite"
    statuses = list(SampleStatus)
    with Store(path) as store:
        for run, repeats in (("one", 1), ("five", 5), ("empty", 1)):
            store.open_run(run, replace(SPEC, repeats=repeats))
            if run == "empty":
                continue
            for i in range(40):
                for k in range(repeats):
                    status = rng.choice(statuses)
                    base = sample(f"law/{i}", response="答案：A")
                    correct = None if status is SampleStatus.ERROR or i % 7 == 0 else rng.random() < 0.5
                    score = None if i % 7 == 0 and rng.random() < 0.5 else (1.0 if correct else 0.0)
                    store.add_sample(
                        run, replace(base, status=status, correct=correct, score=score, sample=k)
                    )
        store.finish_run("one")
    listed = {info.run.name: (info.coverage, info.accuracy) for info in runs(store=path)}
    assert listed == from_the_samples(path)
    assert listed["five"][1] != from_the_samples(path)["one"][1]  # over its 200 samples, not its first 40


def test_a_light_read_summarises_as_the_whole_samples_do(tmp_path: Path) -> None:
    """report and leaderboard read no prompt (issue 42): the numbers are the same, the prompt is gone and
    the model's text is kept only where it was cut off (the output profile looks for a loop there)."""
    copy = tmp_path / "golden.sqlite"
    shutil.copyfile(GOLDEN, copy)
    prompts = 0
    with Store(copy, read_only=True) as store:
        for record in store.runs():
            whole, light = store.samples(record.name), store.samples(record.name, light=True)
            assert summarize(record.name, light).to_json() == summarize(record.name, whole).to_json()
            assert {s.prompt for s in light} == {""}
            prompts += sum(bool(s.prompt) for s in whole)
            assert all(s.response is None for s in light if not s.truncated)
            kept = [(s.response, s.reasoning) for s in whole if s.truncated]
            assert kept == [(s.response, s.reasoning) for s in light if s.truncated]
    assert prompts > 100  # the golden runs have prompts to leave out
