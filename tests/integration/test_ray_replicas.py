"""Data-parallel replicas on a local Ray cluster (CPU only): the same samples as a one-process run, a
replica killed mid-run has its unanswered requests asked of another, a killed or paused driver costs only
the requests in flight, and the replica count is not in the run spec."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.cli.main import main
from kaoshi.models import GenerateRequest, ModelError, ModelOptions, resolve_model
from kaoshi.models.ray_replicas import AHEAD, RayReplicas
from tests.support import interruptions
from tests.support.runs import mock_script

pytestmark = pytest.mark.slow
if importlib.util.find_spec("ray") is None:
    pytest.skip("needs Ray: pip install 'kaoshi[ray]'", allow_module_level=True)

import ray  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_cluster() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        # the cluster's workers (and the replicas of drivers that join it) import the tests' backends
        patch.setenv("PYTHONPATH", interruptions.env()["PYTHONPATH"])
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def all_cpus_free() -> None:
    """Wait until the actors of a driver that is gone have been reaped (their CPUs are free again)."""
    interruptions.wait_until(lambda: ray.available_resources().get("CPU", 0) >= 2, "the replicas' CPUs", 60)


def dead(actor: Any) -> None:
    """Wait (up to 30 s) until a killed actor answers with RayActorError."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            ray.get(actor.describe.remote(), timeout=5)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            continue
        time.sleep(0.05)
    raise AssertionError("the killed replica still answers")


def test_replicas_give_the_samples_of_one_process(tmp_path: Path) -> None:
    script = mock_script(tmp_path / "m.jsonl", right=set())
    alone = kaoshi.evaluate("sample", model=f"mock:{script}", store=tmp_path / "a.sqlite")
    spread = kaoshi.evaluate("sample", model=f"mock:{script}", replicas=2, store=tmp_path / "b.sqlite")
    assert spread.spec == alone.spec  # replicas change where answers are computed, not what they are
    strip = [(s.question_id, s.response, s.answer, s.status) for s in alone.samples]
    assert [(s.question_id, s.response, s.answer, s.status) for s in spread.samples] == strip
    loglik = kaoshi.evaluate("sample", model="random", method="loglik", replicas=2, limit_total=12)
    assert loglik.errors == 0 and all(s.logprobs for s in loglik.samples if s.qtype != "open")


def test_a_replica_killed_mid_run_has_its_unanswered_requests_asked_again() -> None:
    model = resolve_model("random", ModelOptions(replicas=2, batch_size=8))  # units of 8 requests
    assert isinstance(model, RayReplicas)
    requests = [GenerateRequest(f"q{i}", f"题{i}", choices=("A", "B")) for i in range(40)]
    outputs = model.generate(requests)
    first = next(outputs)  # the first output is back; kill a replica while the others are in flight
    killed = model.actors[1]
    ray.kill(killed)
    dead(killed)  # ray.kill is asynchronous: make sure the replica is gone before going on
    rest = list(outputs)
    ids = [o.id for o in [first, *rest]]
    assert sorted(ids) == sorted(r.id for r in requests) and len(ids) == 40  # each answered once
    assert model.lost == 1 and len(model.actors) == 1
    expected = {o.id: o.text for o in resolve_model("random").generate(requests)}
    assert {o.id: o.text for o in [first, *rest]} == expected
    model.close()


def test_every_replica_gone_is_an_error_not_a_hang() -> None:
    model = resolve_model("random", ModelOptions(replicas=2))
    assert isinstance(model, RayReplicas)
    for actor in list(model.actors):
        ray.kill(actor)
        dead(actor)
    with pytest.raises(ModelError, match="every replica of 'random' died"):
        list(model.generate([GenerateRequest("q", "题", choices=("A",))]))


def test_the_command_line_runs_replicas(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    code = main(["run", "--benchmark", "sample", "--model", "random", "--replicas", "2",
                 "--limit-total", "10", "--store", str(store)])  # fmt: skip
    assert code == 0
    capsys.readouterr()
    [run] = kaoshi.runs(store=store)
    assert run.run.n_samples == 10 and "replicas" not in str(run.run.spec.model_settings)
    code = main(
        ["run", "--benchmark", "sample", "--model", "random", "--replicas", "0", "--store", str(store)]
    )
    assert (code, capsys.readouterr().err.strip()) == (2, "error: --replicas must be > 0, got 0")


# -- what a stop costs: at most the requests in flight -----------------------------------------------------
def test_a_killed_replica_costs_only_its_requests_in_flight(tmp_path: Path) -> None:
    log = tmp_path / "requests.log"
    model = resolve_model(interruptions.logging_spec(log), ModelOptions(replicas=2, batch_size=8))

    def kill(actor: Any) -> None:
        ray.kill(actor)
        dead(actor)

    try:
        repeats = interruptions.replica_killed(log, model, kill)
    finally:
        model.close()
    # what the replica had answered had reached the driver (two replicas, each at most AHEAD outputs
    # ahead of it); only what it was answering is asked again
    assert repeats.unstored <= 2 * AHEAD, repeats
    assert repeats.asked_again <= repeats.in_flight, repeats


def test_a_killed_driver_costs_only_its_requests_in_flight_and_its_replicas_stop(tmp_path: Path) -> None:
    all_cpus_free()
    repeats = interruptions.driver_killed(tmp_path, ray.get_runtime_context().gcs_address)
    all_cpus_free()
    assert repeats.unstored <= 2 * AHEAD, repeats  # answers reach the driver as they come
    assert repeats.asked_again <= repeats.in_flight + repeats.unstored, repeats
    assert repeats.sent_after_stop <= 2, repeats  # one request a replica, at most, once the driver is gone


def test_a_paused_driver_taken_over_costs_only_its_requests_in_flight(tmp_path: Path) -> None:
    all_cpus_free()
    repeats = interruptions.driver_paused(tmp_path, ray.get_runtime_context().gcs_address)
    all_cpus_free()
    assert repeats.sent_after_stop <= 2, repeats  # the replicas wait for the paused driver
    assert repeats.asked_again <= repeats.in_flight + repeats.unstored, repeats
