"""What a stopped process costs: requests in flight when a run's process was paused, killed or taken over,
against the questions asked twice over the whole run (paid twice), per path.

Scenarios (tests/support/interruptions.py; each process's lease is taken over after 1 s without a heartbeat):
- local: A (chunk 16, 50 ms a request) pauses (SIGSTOP); B takes the run over and finishes it; A wakes;
- --join: B joins A; A pauses; B answers its part, then A's claimed questions; A wakes;
- openai: as local, against a 200 ms OpenAI-compatible server at --concurrency 8 (chunk 40);
- ray replica killed: 2 replicas, one killed mid-run (ray.kill);
- ray driver killed: `--replicas 2` on a running cluster (and on a local one the driver started), the
  driver SIGKILLed, the run resumed; also what the orphaned replicas asked in the 3 s after;
- ray driver paused: as local with `--replicas 2`; also what the replicas asked during the pause.

Run: .venv/bin/python speed/repeat_asks.py  (Ray scenarios need `pip install 'kaoshi[ray]'`)
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import interruptions


def ray_scenarios(folder: Path) -> list[interruptions.Repeats]:
    import ray

    from kaoshi.models import ModelOptions, resolve_model

    os.environ["PYTHONPATH"] = interruptions.env()["PYTHONPATH"]  # replicas import tests.support.models
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        address = ray.get_runtime_context().gcs_address
        log = folder / "replica" / "requests.log"
        log.parent.mkdir()
        replicas = resolve_model(interruptions.logging_spec(log), ModelOptions(replicas=2, batch_size=8))

        def kill(actor: object) -> None:
            ray.kill(actor)
            while True:
                try:
                    ray.get(actor.describe.remote(), timeout=5)  # type: ignore[attr-defined]
                except ray.exceptions.RayActorError:
                    return
                except ray.exceptions.GetTimeoutError:
                    continue

        killed = interruptions.replica_killed(log, replicas, kill)
        replicas.close()
        found = [killed]
        for name, scenario in (
            ("driver-killed", interruptions.driver_killed),
            ("driver-paused", interruptions.driver_paused),
        ):
            (folder / name).mkdir()
            found.append(scenario(folder / name, address))
        return found
    finally:
        ray.shutdown()


def main() -> None:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, scenario in (
            ("local", interruptions.paused_then_taken_over),
            ("join", interruptions.joined_then_paused),
            ("openai", interruptions.openai_paused),
        ):
            (folder / name).mkdir()
            results.append(scenario(folder / name))
            print(results[-1], flush=True)
        if importlib.util.find_spec("ray") is not None:
            (folder / "own").mkdir()  # before this process starts a cluster the driver could join
            own = interruptions.driver_killed(folder / "own", None)
            results.append(replace(own, path="ray driver killed (its own cluster)"))
            print(results[-1], flush=True)
            (folder / "ray").mkdir()
            for found in ray_scenarios(folder / "ray"):
                results.append(found)
                print(found, flush=True)
    print("\n| path | at the stop: in flight | answered, not stored | asked again | sent after the stop |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r.path} | {r.in_flight} | {r.unstored} | {r.asked_again} | {r.sent_after_stop} |")


if __name__ == "__main__":
    main()
