"""Data-parallel replicas on Ray: N actors each hold one replica of a backend (hf, gguf, smollm2, llamacpp,
vllm with its own tensor parallelism, openai, ...); this driver-side Model hands each idle replica a unit
of requests (what its backend takes at once) and yields every output as the replica gives it (a Ray
streaming generator), so the run loop stays the single store writer, stores each answer as it arrives,
and resumes like any run. Results equal a one-process run for deterministic backends (the replica count
is not in the run spec, like the batch size).

What a stop costs is what was in flight: a replica answers at most one output ahead of the driver reading
it (so one whose driver is paused or gone stops sending), a dead replica's unanswered requests go to
another, and a run that may send no more (its lease taken over, its store full) has its replicas stop
before their next request and finish only what they had sent.

Units are contiguous runs of the chunk: the runner's chunks follow exam order, so a subject's questions
(one shared prefix) mostly stay on one replica and prefix reuse keeps working there."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from kaoshi.models.base import (
    GenerateRequest,
    LoglikRequest,
    Message,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.gating import GatedRequests

UNITS_PER_REPLICA = 4  # the runner's chunk: units for every replica, so that few idle at a chunk's end
AHEAD = 1  # outputs a replica may give before the driver reads them (Ray's generator backpressure)

# What makes a replica's backend from its spec and options (kaoshi.models.registry.resolve_model, given by
# the registry, which makes RayReplicas).
LoadBackend = Callable[[str, ModelOptions], Model]


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ModelError("--replicas needs Ray: pip install 'kaoshi[ray]'") from None
    return ray


class _Replica:
    """One backend replica inside a Ray actor (made remote in RayReplicas, so Ray stays optional). Its
    threads: one answers a unit at a time (the next waits its turn), another takes `stop` meanwhile."""

    def __init__(self, spec: str, options: ModelOptions, load_backend: LoadBackend) -> None:
        self.model = load_backend(spec, options)
        self._answering = threading.Lock()  # one unit at a time: a backend is not shared between threads
        self._stopped: set[int] = set()

    def describe(self) -> dict[str, Any]:
        return {
            "default_chat": self.model.default_chat,
            "chat_for": {m: self.model.default_chat_for(m) for m in ("generate", "loglik")},
            "supports": {m: self.model.supports(m) for m in ("generate", "loglik")},
            "chunk_size": {m: self.model.chunk_size(m) for m in ("generate", "loglik")},
            "checks_length": type(self.model).fits is not Model.fits,
            "sampling_options": sorted(self.model.sampling_options),
            "takes_extra_body": self.model.takes_extra_body,
        }

    def answer(self, unit: int, method: str, requests: list[Any]) -> Iterator[ModelOutput]:
        """Each output as the backend gives it (streamed to the driver); once the unit is stopped, the
        backend is given no further request."""
        with self._answering:
            sent = GatedRequests(requests, lambda: unit not in self._stopped)
            try:
                yield from getattr(self.model, method)(sent)
            finally:
                self._stopped.discard(unit)

    def stop(self, unit: int) -> None:
        self._stopped.add(unit)

    def fits(self, prompts: list[tuple[str, tuple[Message, ...] | None, int]]) -> list[bool]:
        return [self.model.fits(text, messages, reserve) for text, messages, reserve in prompts]

    def close(self) -> None:
        self.model.close()


@dataclass
class _Unit:
    """A unit of requests on one replica: its stream of outputs and the requests not answered yet."""

    number: int
    actor: Any
    waiting: dict[str, Any] = field(default_factory=dict)


def _always() -> bool:
    return True


class RayReplicas(Model):
    """`replicas` Ray actors of the backend `spec`, each with `gpus_per_replica` GPUs (0: CPU only), made
    by `load_backend` inside its actor."""

    name = "ray"

    def __init__(
        self,
        spec: str,
        options: ModelOptions,
        replicas: int,
        *,
        load_backend: LoadBackend,
        gpus_per_replica: float = 0,
        cpus_per_replica: float = 1,
        address: str | None = None,
    ) -> None:
        super().__init__(spec, options)
        if replicas < 1:
            raise ModelError(f"--replicas must be at least 1, got {replicas}")
        if gpus_per_replica < 0:
            raise ModelError(f"--gpus-per-replica must be >= 0, got {gpus_per_replica:g}")
        ray = self._ray = _import_ray()
        if not ray.is_initialized():
            # address None starts a local cluster; "auto" or ray://host:port joins a running one.
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        actor_class = ray.remote(num_cpus=cpus_per_replica, num_gpus=gpus_per_replica, max_concurrency=3)(
            _Replica
        )
        self.actors = [actor_class.remote(spec, options, load_backend) for _ in range(replicas)]
        try:
            described = ray.get([actor.describe.remote() for actor in self.actors])
        except ray.exceptions.RayError as exc:
            self.close()
            raise ModelError(f"a replica of {spec!r} could not start: {_cause(exc)}") from None
        first = described[0]
        self.default_chat = bool(first["default_chat"])
        self._chat_for: dict[str, bool] = first["chat_for"]
        self._supports: dict[str, bool] = first["supports"]
        self._chunk: dict[str, int] = first["chunk_size"]
        self._checks_length = bool(first["checks_length"])
        # what the replicas' backend honours, as the backend itself declares it
        self._sampling_options = frozenset(first["sampling_options"])
        self._takes_extra_body = bool(first["takes_extra_body"])
        self._units = itertools.count()
        self.lost = 0  # replicas that died during the run

    # -- what the runner asks: the replicas' backend's answers -----------------------------------------
    def supports(self, method: str) -> bool:
        return self._supports[method]

    def default_chat_for(self, method: str) -> bool:
        return self._chat_for[method]

    @property
    def sampling_options(self) -> frozenset[str]:
        return self._sampling_options

    @property
    def takes_extra_body(self) -> bool:
        return self._takes_extra_body

    def chunk_size(self, method: str) -> int:
        # The runner claims and waits for a whole chunk before the next: units for every replica.
        return self._unit_size(method) * max(1, len(self.actors)) * UNITS_PER_REPLICA

    def fits(self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = 256) -> bool:
        if not self._checks_length:  # the backend fits everything: no round trip per question
            return True
        # One round trip per prompt (milliseconds): a tokenizer on the driver would save it.
        fitted: list[bool] = self._call_any("fits", [(prompt_text, messages, reserve)])
        return fitted[0]

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        return self._fan_out("generate", requests)

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        return self._fan_out("loglikelihood", requests)

    def close(self) -> None:
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []

    # -- distribution ----------------------------------------------------------------------------------
    def _unit_size(self, method: str) -> int:
        """A unit is what the backend takes at once (its own chunk): a batch, or a subject's prefix group."""
        return max(1, self._chunk["generate" if method == "generate" else "loglik"])

    def _fan_out(self, method: str, requests: Sequence[Any]) -> Iterator[ModelOutput]:
        """Every request answered once. Idle replicas get a unit each, taken from `requests` as they go
        (a run's gate may keep the rest back); a dead replica's unanswered requests go to another."""
        ray = self._ray
        admit: Callable[[], bool] = requests.admit if isinstance(requests, GatedRequests) else _always
        source = iter(requests)
        size = self._unit_size(method)
        again: list[Any] = []  # requests of dead replicas, not answered
        running: dict[Any, _Unit] = {}  # stream -> its unit
        idle = list(self.actors)
        stopping = False
        try:
            while True:
                while idle and not stopping:
                    batch, again = again[:size], again[size:]
                    batch += itertools.islice(source, size - len(batch))
                    if not batch:
                        break
                    unit = _Unit(next(self._units), idle.pop(0), {r.id: r for r in batch})
                    stream = unit.actor.answer.options(
                        num_returns="streaming", _generator_backpressure_num_objects=AHEAD
                    ).remote(unit.number, method, batch)
                    running[stream] = unit
                if not running:
                    if not again:
                        return
                    if stopping:  # never sent again: not an error
                        _withhold(requests, {r.id: r for r in again})
                        return
                    raise self._all_dead()
                [ready], _ = ray.wait(list(running), num_returns=1)
                if not stopping and not admit():
                    # reading an output lets its replica send one more request: none may be sent now
                    stopping = True
                    self._stop(running.values())
                    _withhold(requests, {r.id: r for r in source})  # the gate is shut: nothing is taken
                unit = running[ready]
                try:
                    output = ray.get(next(ready))
                except StopIteration:
                    del running[ready]
                    idle.append(unit.actor)
                    if stopping:
                        _withhold(requests, unit.waiting)
                    continue
                except ray.exceptions.RayActorError:
                    del running[ready]
                    self.lost += 1
                    self.actors.remove(unit.actor)
                    again = list(unit.waiting.values()) + again  # asked again of a live replica
                    continue
                except ray.exceptions.RayTaskError as exc:
                    del running[ready]
                    yield from self._ready(running)
                    raise ModelError(f"a replica of {self.spec!r} failed: {_cause(exc)}") from None
                unit.waiting.pop(output.id, None)
                yield output
        except KeyboardInterrupt:
            yield from self._ready(running)  # answers already computed (and perhaps paid for) are kept
            raise
        finally:
            for stream in running:  # a replica stops answering what nobody reads
                ray.cancel(stream)

    def _stop(self, units: Any) -> None:
        """Replicas send nothing more; the requests they had sent are still answered."""
        ray = self._ray
        calls = [unit.actor.stop.remote(unit.number) for unit in units]
        for call in calls:
            with contextlib.suppress(ray.exceptions.RayActorError):  # a dead one sends nothing anyway
                ray.get(call)

    def _ready(self, running: dict[Any, _Unit]) -> Iterator[ModelOutput]:
        """The outputs already given, when the run must stop: stored, not asked again."""
        ray = self._ray
        while running:
            ready, _ = ray.wait(list(running), num_returns=len(running), timeout=0)
            if not ready:
                return
            for stream in ready:
                try:
                    output = ray.get(next(stream))
                except (StopIteration, ray.exceptions.RayError):
                    del running[stream]
                    continue
                yield output

    def _call_any(self, method: str, *args: Any) -> Any:
        ray = self._ray
        while self.actors:
            actor = self.actors[0]
            try:
                return ray.get(getattr(actor, method).remote(*args))
            except ray.exceptions.RayActorError:
                self.lost += 1
                self.actors.remove(actor)
        raise self._all_dead()

    def _all_dead(self) -> ModelError:
        return ModelError(f"every replica of {self.spec!r} died ({self.lost} lost); resume the run")


def _withhold(requests: Sequence[Any], unanswered: dict[str, Any]) -> None:
    """Requests a stopped replica never sent: not an error of the backend's."""
    if isinstance(requests, GatedRequests):
        requests.withhold(list(unanswered))


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc).splitlines()[0]
