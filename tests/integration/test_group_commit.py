"""Answers that come from a backend together are committed in one transaction (kaoshi.runner.grouping), and
still none is reported stored before it is committed; evaluate reads no sample back unless asked."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
import kaoshi.store.sqlite
from kaoshi.api.evaluation import RunInterrupted
from kaoshi.api.summary import load_run, stored_samples
from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.runner import grouping
from kaoshi.runner.grouping import GROUP_WAIT_S, INSTANT_S
from kaoshi.store import SampleRecord, Store
from tests.support import interruptions
from tests.support.stores import stored_ids

N_SAMPLE = 44  # questions of the sample exam


def _answer(request: GenerateRequest) -> ModelOutput:
    return ModelOutput(request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}")


_WORK_S = 0.005  # longer than an instant answer, shorter than a group may wait for its next answer
assert INSTANT_S < _WORK_S < GROUP_WAIT_S


class _SlowModel(Model):
    """Takes a while over each answer (more than an instant backend) and notes, as it starts on one, how
    many answers the store already holds."""

    default_batch_size = 8

    def __init__(self, store: Path) -> None:
        super().__init__("slow", ModelOptions())
        self.store = store
        self.stored_at_start: list[int] = []

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            self.stored_at_start.append(len(stored_ids(self.store)))
            time.sleep(_WORK_S)
            yield _answer(request)


class _StoppedModel(Model):
    """Answers the first `answers` at once, then is stopped (Ctrl-C) while working on the next."""

    default_batch_size = 16

    def __init__(self, answers: int) -> None:
        super().__init__("stopped", ModelOptions())
        self.answers = answers

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for index, request in enumerate(requests):
            if index == self.answers:
                raise KeyboardInterrupt
            yield _answer(request)


def _commits(store: Store) -> list[str]:
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)
    return statements


def test_the_answers_a_batch_returns_are_committed_in_one_transaction(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the random model is instant; on a loaded machine an answer can still come 1 ms after it was asked, or
    # a chunk take 50 ms, which is a backend at work: not what this test is about
    monkeypatch.setattr(grouping, "INSTANT_S", 10.0)
    monkeypatch.setattr(grouping, "GROUP_WAIT_S", 60.0)
    with Store(store_path) as store:
        statements = _commits(store)
        result = kaoshi.evaluate("sample", "random", run_name="r", store=store, batch_size=16)
    assert result.new_samples == N_SAMPLE
    inserts = [i for i, sql in enumerate(statements) if sql.startswith("INSERT OR REPLACE INTO samples")]
    commits = [i for i, sql in enumerate(statements) if sql == "COMMIT"]
    # 44 answers in chunks of 16: three transactions of answers (one each before grouping)
    assert len({next(c for c in commits if c > i) for i in inserts}) == 3
    assert stored_ids(store_path) == {s.question_id for s in result.samples}


def test_a_backend_that_takes_a_while_has_each_answer_committed_before_the_next_is_asked(
    store_path: Path,
) -> None:
    model = _SlowModel(store_path)
    kaoshi.evaluate("sample", model, run_name="r", store=store_path, limit_total=12)
    assert model.stored_at_start == list(range(12))


def test_an_answer_is_committed_before_it_is_reported(store_path: Path) -> None:
    reported: list[tuple[str, bool]] = []

    def on_sample(sample: SampleRecord) -> None:
        reported.append((sample.question_id, sample.question_id in stored_ids(store_path)))

    kaoshi.evaluate("sample", "random", run_name="r", store=store_path, on_sample=on_sample)
    assert len(reported) == N_SAMPLE and all(committed for _, committed in reported)


def test_the_answers_that_came_back_before_a_stop_are_kept(store_path: Path) -> None:
    with pytest.raises(RunInterrupted) as stopped:
        kaoshi.evaluate("sample", _StoppedModel(5), run_name="r", store=store_path)
    assert stopped.value.saved == 5
    assert len(stored_ids(store_path)) == 5


def test_evaluate_reads_no_sample_back_until_asked(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    real = kaoshi.store.sqlite.sample_from_row

    def counted(row: tuple[object, ...], path: Path, run: str, sample: int = 0) -> SampleRecord:
        read.append(run)
        return real(row, path, run, sample)

    monkeypatch.setattr(kaoshi.store.sqlite, "sample_from_row", counted)
    result = kaoshi.evaluate("sample", "random", run_name="r", store=store_path)
    assert read == []
    assert result.error_causes() == [] and read == []  # no errors: nothing to read
    assert f"samples={N_SAMPLE}," in repr(result) and read == []
    assert result.summary == load_run("r", store=store_path).summarize()
    assert [s.to_json() for s in result.samples] == [
        s.to_json() for s in stored_samples("r", store=store_path)
    ]


def test_an_in_memory_run_keeps_its_samples() -> None:
    result = kaoshi.evaluate("sample", "random", run_name="r")
    assert result.store is None and len(result.samples) == N_SAMPLE


_STALLS = """
import sys, time
import kaoshi
from kaoshi.models import Model, ModelOptions, ModelOutput

class Stalls(Model):
    default_batch_size = 4

    def __init__(self):
        super().__init__("stalls", ModelOptions())
        self.given = 0

    def generate(self, requests):
        for request in requests:
            if self.given == int(sys.argv[2]):
                time.sleep(600)  # killed here
            self.given += 1
            yield ModelOutput(request.id, text="答案：A")

reported = open(sys.argv[3], "a")
def on_sample(sample):
    reported.write(sample.question_id + "\\n")
    reported.flush()

kaoshi.evaluate("sample", Stalls(), run_name="r", store=sys.argv[1], on_sample=on_sample)
"""


def test_every_answer_reported_stored_survives_a_kill_and_is_not_asked_again(tmp_path: Path) -> None:
    store, reported = tmp_path / "store.sqlite", tmp_path / "reported.txt"
    process = subprocess.Popen(
        [sys.executable, "-c", _STALLS, str(store), "14", str(reported)], env=interruptions.env()
    )
    try:
        interruptions.wait_until(
            lambda: reported.exists() and len(reported.read_text().split()) >= 12, "12 answers reported"
        )
        time.sleep(0.2)  # the model stalls on its 15th answer
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    said, stored = set(reported.read_text().split()), stored_ids(store)
    assert len(said) >= 12 and said <= stored
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    again = _Recording()
    result = kaoshi.evaluate("sample", again, run_name="r", store=store)
    assert (result.already_done, result.new_samples) == (len(stored), N_SAMPLE - len(stored))
    assert not set(again.asked) & stored


class _Recording(Model):
    """The backend of _STALLS (the same spec: it resumes that run), answering at once."""

    def __init__(self) -> None:
        super().__init__("stalls", ModelOptions())
        self.asked: list[str] = []

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            self.asked.append(request.id)
            yield ModelOutput(request.id, text="答案：A")


@pytest.mark.parametrize("options", [{}, {"repeats": 3, "temperature": 0.7}, {"method": "loglik"}])
def test_the_summary_evaluate_returns_is_the_stored_runs(
    store_path: Path, options: dict[str, object]
) -> None:
    result = kaoshi.evaluate("sample", "random", run_name="r", store=store_path, **options)
    assert result.summary == load_run("r", store=store_path).summarize()
    assert result.summary.to_json() == kaoshi.summarize("r", store=store_path).to_json()
