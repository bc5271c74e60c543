"""Stopping a run's process mid-run (paused, killed, taken over) and counting what is paid twice: the
scenarios that tests/integration/test_leases.py and tests/integration/test_ray_replicas.py assert on and that
speed/repeat_asks.py reports (test code, not product code).

Every scenario runs `LoggingModel` (`py:tests.support.interruptions:LoggingModel:LOG`), which appends
`+ID` to a log file as it starts a request and `-ID` once it has the answer: a question started twice was
paid for twice. At the stop, `in_flight` is what the stopped side had started and not finished (what any
design must ask again) and `unstored` what it had finished and not stored. The processes run with fast
leases (taken over after `STALE_S` without a heartbeat) so that a pause lasts a second, not a minute."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput

ROOT = Path(__file__).resolve().parents[2]
STALE_S = 1.0
HEARTBEAT_S = 0.1
# `kaoshi` with fast leases: the lease module's timing is set before the command runs
_FAST_LEASES = (
    "import sys, kaoshi.store.leases as leases; "
    f"leases.STALE_AFTER_S = {STALE_S}; leases.HEARTBEAT_S = {HEARTBEAT_S}; "
    "from kaoshi.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


class LoggingModel(Model):
    """Appends `+ID` to the log file ARG as it starts a request and `-ID` once answered (flushed at once),
    `pause_s` apart; answers the first choice."""

    pause_s = 0.05

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        self.log = open(spec, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            self._write(f"+{request.id}")
            time.sleep(self.pause_s)
            self._write(f"-{request.id}")
            yield ModelOutput(request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}")

    def _write(self, line: str) -> None:
        self.log.write(line + "\n")
        self.log.flush()

    def close(self) -> None:
        self.log.close()


class SlowLoggingModel(LoggingModel):
    pause_s = 0.2


@dataclass(frozen=True)
class Repeats:
    """What one stop cost. At the stop: requests started and not answered (in flight), answered and not
    stored; over the whole run: questions asked twice; after the stop: requests the stopped side still
    started (a paused driver's replicas, or a killed one's)."""

    path: str
    in_flight: int
    unstored: int
    asked_again: int
    sent_after_stop: int = 0


def env() -> dict[str, str]:
    variables = dict(os.environ)
    variables["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "src"), variables.get("PYTHONPATH", "")])
    variables.pop("KAOSHI_STORE", None)
    return variables


def logging_spec(log: Path, *, slow: bool = False) -> str:
    return f"py:tests.support.interruptions:{'SlowLoggingModel' if slow else 'LoggingModel'}:{log}"


def run_args(store: Path, model: str, *extra: str) -> list[str]:
    """`kaoshi run` of the sample exam (44 questions) as run 'r', in a process with fast leases."""
    return [
        sys.executable, "-c", _FAST_LEASES, "run", "--benchmark", "sample", "--model", model,
        "--run-name", "r", "--store", str(store), "--no-report", *extra,
    ]  # fmt: skip


def start(args: Sequence[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        args, cwd=cwd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )


def stored_ids(store: Path) -> set[str]:
    try:
        with sqlite3.connect(store, timeout=5) as db:
            return {row[0] for row in db.execute("SELECT question_id FROM samples")}
    except sqlite3.OperationalError:  # not created yet
        return set()


def stored(store: Path) -> int:
    return len(stored_ids(store))


def errors(store: Path) -> int:
    """Error samples: a stopped process must not store one for a request it never sent."""
    with sqlite3.connect(store, timeout=5) as db:
        return int(db.execute("SELECT COUNT(*) FROM samples WHERE status='error'").fetchone()[0])


def _lines(mark: str, logs: Sequence[Path]) -> list[str]:
    return [line[1:] for log in logs if log.exists() for line in log.read_text().split() if line[0] == mark]


def asked(*logs: Path) -> list[str]:
    """The requests started, in order (a question twice when asked twice)."""
    return _lines("+", logs)


def at_stop(log: Path, store: Path) -> tuple[int, int]:
    """(in flight, answered and not stored) by the process that writes `log`."""
    started, answered = Counter(asked(log)), Counter(_lines("-", [log]))
    stored = stored_ids(store)
    return sum((started - answered).values()), len(set(answered) - stored)


def asked_again(*logs: Path) -> int:
    return sum(count - 1 for count in Counter(asked(*logs)).values())


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def pause_between_writes(process: subprocess.Popen[bytes], store: Path, sent: Callable[[], int]) -> None:
    """SIGSTOP just after the process sent a request (`sent` grew), and not while it holds the store's
    write lock (the other process would wait for it, not take over): then it is let go and tried again."""
    while True:
        wait_until(_grows(sent), "the next request")
        process.send_signal(signal.SIGSTOP)
        if not _write_locked(store):
            return
        process.send_signal(signal.SIGCONT)


def _grows(count: Callable[[], int]) -> Callable[[], bool]:
    before = count()
    return lambda: count() > before


def _write_locked(store: Path) -> bool:
    db = sqlite3.connect(store, timeout=0, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        db.close()


def finish(process: subprocess.Popen[bytes], timeout_s: float = 120.0) -> str:
    """Wait for a process; its stderr. A process left running is killed with its group (Ray's too)."""
    try:
        _, err = process.communicate(timeout=timeout_s)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return err.decode(errors="replace")


def _two_folders(folder: Path) -> tuple[Path, Path]:
    """A's and B's working folders: the model spec names the log relatively (the same spec, so the same
    run), and each process writes its own."""
    (folder / "a").mkdir(exist_ok=True)
    (folder / "b").mkdir(exist_ok=True)
    return folder / "a", folder / "b"


def paused_then_taken_over(folder: Path, *extra: str) -> Repeats:
    """A pauses (SIGSTOP) mid-chunk; once its lease is stale, B (no --join) takes the run over and
    finishes it; then A wakes up and goes on as far as it may."""
    a, b = _two_folders(folder)
    store, model = folder / "store.sqlite", logging_spec(Path("requests.log"))
    first = start(run_args(store, model, "--batch-size", "16", *extra), a)
    try:
        wait_until(lambda: stored(store) >= 5, "A's first answers")
        pause_between_writes(first, store, lambda: len(asked(a / "requests.log")))
        in_flight, unstored = at_stop(a / "requests.log", store)
        time.sleep(STALE_S * 1.5)
        second = start(run_args(store, model), b)
        second_err = finish(second)
        assert second.returncode == 0, second_err
    finally:
        first.send_signal(signal.SIGCONT)
    finish(first)
    assert (stored(store), errors(store)) == (44, 0)
    return Repeats("local", in_flight, unstored, asked_again(a / "requests.log", b / "requests.log"))


def joined_then_paused(folder: Path) -> Repeats:
    """A runs, B joins it (--join), A pauses; B answers its part, then takes over A's claimed questions
    once A's lease is stale; A wakes up after B is done."""
    a, b = _two_folders(folder)
    store, model = folder / "store.sqlite", logging_spec(Path("requests.log"), slow=True)
    first = start(run_args(store, model, "--batch-size", "16"), a)
    try:
        wait_until(lambda: stored(store) >= 3, "A's first answers")
        second = start([*run_args(store, model), "--join"], b)
        wait_until(lambda: len(asked(b / "requests.log")) >= 2, "B to have joined")
        pause_between_writes(first, store, lambda: len(asked(a / "requests.log")))
        in_flight, unstored = at_stop(a / "requests.log", store)
        second_err = finish(second)
        assert second.returncode == 0, second_err
    finally:
        first.send_signal(signal.SIGCONT)
    finish(first)
    assert (stored(store), errors(store)) == (44, 0)
    return Repeats("--join", in_flight, unstored, asked_again(a / "requests.log", b / "requests.log"))


def driver_killed(folder: Path, ray_address: str | None, *, settle_s: float = 3.0) -> Repeats:
    """`--replicas 2` on a running Ray cluster (None: the driver starts its own); the driver is killed
    (SIGKILL) mid-run and the run resumed in one process. Also counts what the replicas asked after the
    driver was gone."""
    log, store = folder / "requests.log", folder / "store.sqlite"
    model = logging_spec(log)
    cluster = [] if ray_address is None else ["--ray-address", ray_address]
    replicated = run_args(store, model, "--batch-size", "8", "--replicas", "2", *cluster)
    driver = start(replicated, folder)
    try:
        wait_until(lambda: len(asked(log)) >= 20, "the driver's first requests")
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        at_kill, (in_flight, unstored) = len(asked(log)), at_stop(log, store)
        time.sleep(settle_s)  # what orphaned replicas still ask
        after = len(asked(log))
    finally:
        finish(driver)
        with contextlib.suppress(ProcessLookupError):  # the cluster it started, if any
            os.killpg(driver.pid, signal.SIGKILL)
    resumed = start(run_args(store, model), folder)
    err = finish(resumed)
    assert resumed.returncode == 0, err
    assert (stored(store), errors(store)) == (44, 0)
    return Repeats("ray driver killed", in_flight, unstored, asked_again(log), after - at_kill)


def openai_paused(folder: Path) -> Repeats:
    """As `paused_then_taken_over`, with the openai backend against a 200 ms server at --concurrency 8
    (chunks of 40): A pauses with requests in flight to the server and more of its chunk unsent."""
    from tests.support.fake_openai import FakeOpenAI

    store = folder / "store.sqlite"
    with FakeOpenAI(latency_s=0.2, max_seconds=600) as server:
        model = ["--base-url", server.base_url, "--concurrency", "8", "--batch-size", "40"]
        args = run_args(store, "openai:m", *model)
        first = start(args, folder)
        try:
            wait_until(lambda: stored(store) >= 10, "A's first answers")
            pause_between_writes(first, store, lambda: len(server.bodies))
            time.sleep(0.1)  # what A sent just before reaches the server
            in_flight = server._in_flight  # being answered by the server
            unstored = len(server.bodies) - in_flight - stored(store)
            time.sleep(STALE_S * 1.5)
            second = start(args, folder)
            second_err = finish(second)
            assert second.returncode == 0, second_err
        finally:
            first.send_signal(signal.SIGCONT)
        finish(first)
        assert (stored(store), errors(store)) == (44, 0)
        prompts = Counter(repr(body.get("messages") or body.get("prompt")) for body in server.bodies)
    return Repeats("openai", in_flight, unstored, sum(n - 1 for n in prompts.values()))


def driver_paused(folder: Path, ray_address: str) -> Repeats:
    """`--replicas 2` on a running Ray cluster; the driver pauses (SIGSTOP), B (one process) takes the run
    over once the driver's lease is stale, then the driver wakes up. Also counts what the replicas asked
    while the driver was paused."""
    log, store = folder / "requests.log", folder / "store.sqlite"
    model = logging_spec(log)
    replicated = run_args(store, model, "--batch-size", "8", "--replicas", "2", "--ray-address", ray_address)
    driver = start(replicated, folder)
    try:
        wait_until(lambda: len(asked(log)) >= 20, "the driver's first requests")
        pause_between_writes(driver, store, lambda: len(asked(log)))
        paused_at, (in_flight, unstored) = len(asked(log)), at_stop(log, store)
        time.sleep(STALE_S * 1.5)
        during = len(asked(log)) - paused_at
        second = start(run_args(store, model), folder)
        second_err = finish(second)
        assert second.returncode == 0, second_err
    finally:
        driver.send_signal(signal.SIGCONT)
    finish(driver)
    assert (stored(store), errors(store)) == (44, 0)
    return Repeats("ray driver paused", in_flight, unstored, asked_again(log), during)


def replica_killed(log: Path, replicas: object, kill: Callable[[object], None]) -> Repeats:
    """Two replicas answer 64 requests; once 24 were sent, replica 1 is killed (`kill` returns once it is
    gone). In flight: what had been sent and not received by then."""
    from kaoshi.models import GenerateRequest
    from kaoshi.models.ray_replicas import RayReplicas

    assert isinstance(replicas, RayReplicas)
    requests = [GenerateRequest(f"q{i}", f"题{i}", choices=("A", "B")) for i in range(64)]
    received: list[str] = []
    in_flight: list[int] = []

    def killer() -> None:
        wait_until(lambda: len(asked(log)) >= 24, "24 requests")
        kill(replicas.actors[1])
        started, answered = Counter(asked(log)), Counter(_lines("-", [log]))
        in_flight.append(sum((started - answered).values()))
        in_flight.append(len(set(answered) - set(received)))

    thread = threading.Thread(target=killer)
    thread.start()
    for output in replicas.generate(requests):
        received.append(output.id)
    thread.join()
    assert sorted(received) == sorted(r.id for r in requests)  # every request answered once
    return Repeats("ray replica killed", in_flight[0], in_flight[1], asked_again(log))
