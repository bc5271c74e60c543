"""Run leases: two processes on one run name never ask a question twice (kaoshi.store.leases)."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
from kaoshi.api.evaluation import RunInterrupted
from kaoshi.benchmarks import load_exam_result
from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.store import Store, StoreError
from kaoshi.store import leases as leases_module
from tests.support import interruptions

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_IDS = [q.id for q in load_exam_result("sample").exam.questions]
HOST = socket.gethostname()


class RecordingModel(Model):
    """Answers the first choice, recording every id it is asked; raises `fail` at the `fail_at`-th request."""

    def __init__(self, fail_at: int | None = None, fail: BaseException | None = None) -> None:
        super().__init__("recording", ModelOptions())
        self.asked: list[str] = []
        self.fail_at, self.fail = fail_at, fail

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            if self.fail is not None and len(self.asked) == self.fail_at:
                raise self.fail
            self.asked.append(request.id)
            yield ModelOutput(request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}")


def _rows(store_path: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(store_path) as db:
        return db.execute(f"SELECT * FROM {table}").fetchall()


def _status(store_path: Path, run: str) -> str:
    with sqlite3.connect(store_path) as db:
        return str(db.execute("SELECT status FROM runs WHERE name=?", (run,)).fetchone()[0])


def _plant_lease(
    store_path: Path, run: str, *, pid: int, heartbeat_age_s: float, claimed: Sequence[str] = ()
) -> None:
    """A lease (and claims) as another process would have left it."""
    Store(store_path).close()  # creates the tables
    now = time.time()
    with sqlite3.connect(store_path) as db:
        db.execute(
            "INSERT INTO leases VALUES (?, 'other', ?, ?, ?, ?)",
            (run, pid, HOST, now - heartbeat_age_s - 5, now - heartbeat_age_s),
        )
        db.executemany("INSERT INTO claims VALUES (?, ?, 'other', ?)", [(run, q, now) for q in claimed])


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


# -- two real processes ------------------------------------------------------------------------------------
def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), env.get("PYTHONPATH", "")])
    env.pop("KAOSHI_STORE", None)
    return env


def _wait_for_samples(store_path: Path, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(store_path) as db:
                if db.execute("SELECT COUNT(*) FROM samples").fetchone()[0] >= at_least:
                    return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"fewer than {at_least} samples after 60 s")


@pytest.mark.slow
def test_second_process_refuses_then_joins_and_no_question_is_asked_twice(
    tmp_path: Path, store_path: Path
) -> None:
    log = tmp_path / "requests.log"  # one log for every process: the model spec is part of the run spec
    args = [
        sys.executable, "-m", "kaoshi.cli.main", "run", "--benchmark", "sample",
        "--model", f"py:tests.support.models:SlowCountingModel:{log}",
        "--run-name", "shared", "--store", str(store_path), "--no-report",
    ]  # fmt: skip
    first = subprocess.Popen(args, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_samples(store_path, 2)
        refused = subprocess.run(args, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2, refused.stderr
        assert re.search(
            rf"run 'shared' is being run by pid {first.pid} on host {re.escape(HOST)} since "
            r"\d\d:\d\d:\d\d \(heartbeat \d+ s ago\); wait for it, or pass --join to answer the questions "
            "it has not claimed",
            refused.stderr,
        ), refused.stderr
        joined = subprocess.run(
            [*args, "--join"], cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120
        )
        _, first_err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, first_err.decode()
    assert joined.returncode == 0, joined.stderr
    asked = Counter(log.read_text().split())
    assert asked == Counter(SAMPLE_IDS)  # every question asked exactly once, over all processes
    first_new = int(re.findall(r"(\d+) new", first_err.decode())[-1])
    joined_new = int(re.findall(r"(\d+) new", joined.stderr)[-1])
    assert first_new > 0 and joined_new > 0, (first_err.decode(), joined.stderr)
    assert first_new + joined_new == len(SAMPLE_IDS)
    assert _status(store_path, "shared") == "finished"
    assert _rows(store_path, "leases") == [] and _rows(store_path, "claims") == []


# -- a lease held by another (planted) process -------------------------------------------------------------
@pytest.mark.parametrize(
    "holder",
    [
        pytest.param({"heartbeat_age_s": 3600.0}, id="no-heartbeat"),
        pytest.param({"heartbeat_age_s": 0.0, "dead": True}, id="dead-pid"),
    ],
)
def test_a_dead_holders_lease_is_taken_over(store_path: Path, holder: dict[str, object]) -> None:
    pid = _dead_pid() if holder.get("dead") else os.getpid()
    _plant_lease(store_path, "r", pid=pid, heartbeat_age_s=float(holder["heartbeat_age_s"]),  # type: ignore[arg-type]
                 claimed=SAMPLE_IDS[:3])  # fmt: skip
    notes: list[str] = []
    model = RecordingModel()
    result = kaoshi.evaluate("sample", model, run_name="r", store=store_path, notify=notes.append)
    assert Counter(model.asked) == Counter(SAMPLE_IDS)  # its claimed, unanswered questions too, once each
    assert result.new_samples == len(SAMPLE_IDS)
    assert any(f"took over run 'r' from pid {pid} on host {HOST}" in note for note in notes), notes
    assert _status(store_path, "r") == "finished"
    assert _rows(store_path, "leases") == [] and _rows(store_path, "claims") == []


def test_a_live_holder_is_refused_and_joined(store_path: Path) -> None:
    _plant_lease(store_path, "r", pid=os.getpid(), heartbeat_age_s=0.0, claimed=SAMPLE_IDS[:3])
    model = RecordingModel()
    with pytest.raises(StoreError, match=rf"run 'r' is being run by pid {os.getpid()} on host .*--join"):
        kaoshi.evaluate("sample", model, run_name="r", store=store_path)
    assert model.asked == []
    result = kaoshi.evaluate("sample", model, run_name="r", store=store_path, join=True)
    assert Counter(model.asked) == Counter(SAMPLE_IDS[3:])  # the other holder's claims are its own
    assert result.new_samples == len(SAMPLE_IDS) - 3
    assert _status(store_path, "r") == "running"  # the other holder still answers its three
    assert [row[1] for row in _rows(store_path, "leases")] == ["other"]
    assert {row[1] for row in _rows(store_path, "claims")} == set(SAMPLE_IDS[:3])


def test_a_resume_after_everyone_left_asks_only_the_rest(store_path: Path) -> None:
    _plant_lease(store_path, "r", pid=os.getpid(), heartbeat_age_s=0.0, claimed=SAMPLE_IDS[:3])
    kaoshi.evaluate("sample", RecordingModel(), run_name="r", store=store_path, join=True)
    with sqlite3.connect(store_path) as db:
        db.execute("DELETE FROM leases WHERE holder='other'")  # it left without answering its three
    model = RecordingModel()
    kaoshi.evaluate("sample", model, run_name="r", store=store_path)
    assert model.asked == SAMPLE_IDS[:3]
    assert _status(store_path, "r") == "finished"


# -- the lease is given back however the run ends -------------------------------------------------------
@pytest.mark.parametrize(
    "failure", [KeyboardInterrupt(), RuntimeError("backend broke")], ids=["ctrl-c", "error"]
)
def test_the_lease_is_released_when_the_run_stops(store_path: Path, failure: BaseException) -> None:
    model = RecordingModel(fail_at=5, fail=failure)
    with pytest.raises(RunInterrupted if isinstance(failure, KeyboardInterrupt) else RuntimeError):
        kaoshi.evaluate("sample", model, run_name="r", store=store_path)
    assert _rows(store_path, "leases") == [] and _rows(store_path, "claims") == []
    resumed = RecordingModel()
    kaoshi.evaluate("sample", resumed, run_name="r", store=store_path)  # no --join needed
    assert Counter(model.asked + resumed.asked) == Counter(SAMPLE_IDS)
    assert _status(store_path, "r") == "finished"


# -- the lease itself ---------------------------------------------------------------------------------------
def test_the_heartbeat_thread_refreshes_the_lease(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leases_module, "HEARTBEAT_S", 0.05)
    with Store(store_path) as store, store.hold("r"):
        first = _rows(store_path, "leases")[0][5]
        time.sleep(0.5)
        later = _rows(store_path, "leases")[0][5]
    assert isinstance(first, float) and isinstance(later, float) and later > first
    assert _rows(store_path, "leases") == []


def test_a_holder_whose_lease_was_taken_over_stops_at_its_next_claim(store_path: Path) -> None:
    with Store(store_path) as store:
        silent = store.hold("r")
        with sqlite3.connect(store_path) as db:
            db.execute("UPDATE leases SET heartbeat_at = heartbeat_at - 3600")
        with store.hold("r") as taker:
            assert [h.pid for h in taker.taken_over] == [os.getpid()]
            assert taker.claim(["a", "b"]) == {"a", "b"}
            with pytest.raises(StoreError, match=r"lease was taken over .* with --join"):
                silent.claim(["c"])
            silent.release()
            assert {row[1] for row in _rows(store_path, "claims")} == {"a", "b"}


def test_claims_are_first_come(store_path: Path) -> None:
    with Store(store_path) as store, store.hold("r") as one, store.hold("r", join=True) as two:
        assert one.claim(["a", "b"]) == {"a", "b"}
        assert two.claim(["b", "c"]) == {"c"}
        assert one.others_alive() and two.others_alive()


def test_an_older_store_gains_the_lease_tables(store_path: Path) -> None:
    Store(store_path).close()
    with sqlite3.connect(store_path) as db:
        db.execute("DROP TABLE leases")
        db.execute("DROP TABLE claims")
    with Store(store_path, read_only=True) as reading:
        assert reading.runs() == []  # read-only: stand-ins, the file untouched
    with sqlite3.connect(store_path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert not tables & {"leases", "claims"}
    model = RecordingModel()
    kaoshi.evaluate("sample", model, run_name="r", store=store_path)
    assert Counter(model.asked) == Counter(SAMPLE_IDS)


def test_an_in_memory_run_needs_no_lease() -> None:
    model = RecordingModel()
    result = kaoshi.evaluate("sample", model)
    assert result.new_samples == len(SAMPLE_IDS)


# -- a holder paused past its lease (SIGSTOP, a laptop lid, a debugger) -----------------------------------
class PausingModel(RecordingModel):
    """Stands still at its `pause_at`-th request (sent, not answered) for longer than a lease lasts, while
    another process takes the run over; chunks of 16 requests."""

    def __init__(self, store_path: Path, pause_at: int) -> None:
        super().__init__()
        self.options = ModelOptions(batch_size=16)
        self.store_path, self.pause_at = store_path, pause_at
        self.taker: leases_module.Lease | None = None

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            self.asked.append(request.id)
            if len(self.asked) == self.pause_at:
                time.sleep(1.5 * leases_module.STALE_AFTER_S)  # no heartbeat meanwhile (HEARTBEAT_S below)
                with Store(self.store_path) as other:
                    self.taker = other.hold("r")  # takes the stale lease over, claims released
            yield ModelOutput(request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}")


def test_a_paused_holder_sends_no_request_once_its_lease_is_taken_over(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(leases_module, "STALE_AFTER_S", 0.4)
    monkeypatch.setattr(leases_module, "HEARTBEAT_S", 3600.0)  # the pause is the heartbeat's silence
    model = PausingModel(store_path, pause_at=3)
    with pytest.raises(StoreError, match=r"run 'r': this process's lease was taken over .* with --join"):
        kaoshi.evaluate("sample", model, run_name="r", store=store_path)
    # the third request was in flight at the pause: answered and stored; nothing of its chunk after it
    assert model.asked == SAMPLE_IDS[:3]
    with Store(store_path, read_only=True) as store:  # and no error sample for the requests never sent
        assert store.sample_ids("r") == store.finished_ids("r") == set(SAMPLE_IDS[:3])
    assert model.taker is not None
    model.taker.release()


def test_a_fresh_lease_is_confirmed_without_the_store(store_path: Path) -> None:
    with Store(store_path) as store, store.hold("r") as lease:
        store_path.rename(store_path.with_suffix(".moved"))  # a trip to the store would fail now
        lease.confirm()  # the heartbeat is fresh: trusted


@pytest.mark.slow
def test_a_paused_process_taken_over_asks_again_only_its_requests_in_flight(tmp_path: Path) -> None:
    repeats = interruptions.paused_then_taken_over(tmp_path)
    assert repeats.in_flight <= 1 and repeats.unstored == 0  # a backend that sends one at a time
    assert repeats.asked_again <= repeats.in_flight, repeats


@pytest.mark.slow
def test_a_paused_joined_process_asks_again_only_its_requests_in_flight(tmp_path: Path) -> None:
    repeats = interruptions.joined_then_paused(tmp_path)
    assert repeats.asked_again <= repeats.in_flight <= 1, repeats


# -- what `kaoshi runs` says of a run whose holder is paused ---------------------------------------------
def _runs_json(store_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    from kaoshi.cli.main import main

    assert main(["runs", "--store", str(store_path), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    return dict(row)


def test_runs_shows_a_run_held_by_a_silent_process_not_interrupted(
    store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kaoshi.cli.inspect_cmds import _shown_status

    _plant_lease(store_path, "r", pid=os.getpid(), heartbeat_age_s=0.0, claimed=SAMPLE_IDS[:3])
    kaoshi.evaluate("sample", RecordingModel(), run_name="r", store=store_path, join=True)
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE run_owners SET pid=?", (_dead_pid(),))  # the joined process has exited
    row = _runs_json(store_path, capsys)
    assert (row["status"], row.get("holder")) == ("running", None)  # 'other' still answers its three
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE leases SET heartbeat_at = heartbeat_at - 3600")  # alive, silent: paused
    row = _runs_json(store_path, capsys)
    assert row["status"] == "held"
    holder = (
        rf"pid {os.getpid()} on host {re.escape(HOST)}, no heartbeat for 36\d\d s \(paused or unresponsive\)"
    )
    assert re.fullmatch(holder, str(row["holder"])), row
    assert re.fullmatch(rf"held {len(SAMPLE_IDS) - 3}/{len(SAMPLE_IDS)} by {holder}", _shown_status(row))
    with sqlite3.connect(store_path) as db:
        db.execute("UPDATE leases SET pid=?", (_dead_pid(),))  # it died without letting go
    assert _runs_json(store_path, capsys)["status"] == "interrupted"
