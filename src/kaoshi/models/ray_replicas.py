"""Data-parallel replicas on Ray: N actors each hold one replica of a backend (hf, gguf, smollm2, llamacpp,
vllm with its own tensor parallelism, openai, ...); this driver-side Model hands them slices of each chunk
and yields their outputs as slices finish, so the run loop stays the single store writer and resumes
like any run. A replica that dies has its slice asked of another; results equal a one-process run for
deterministic backends (the replica count is not in the run spec, like the batch size).

Slices are contiguous runs of the chunk: the runner's chunks follow exam order, so a subject's questions
(one shared prefix) mostly stay on one replica and prefix reuse keeps working there."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
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

SLICES_PER_REPLICA = 2  # smaller slices balance uneven replicas; larger ones keep prefix groups whole
MIN_SLICE = 32  # requests: a slice's round trip to its actor costs milliseconds


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ModelError("--replicas needs Ray: pip install 'kaoshi[ray]'") from None
    return ray


class _Replica:
    """One backend replica inside a Ray actor (made remote in RayReplicas, so Ray stays optional)."""

    def __init__(self, spec: str, options: ModelOptions) -> None:
        from kaoshi.models.registry import resolve_model

        self.model = resolve_model(spec, options)

    def describe(self) -> dict[str, Any]:
        return {
            "default_chat": self.model.default_chat,
            "supports": {m: self.model.supports(m) for m in ("generate", "loglik")},
            "chunk_size": {m: self.model.chunk_size(m) for m in ("generate", "loglik")},
            "checks_length": type(self.model).fits is not Model.fits,
        }

    def generate(self, requests: list[GenerateRequest]) -> list[ModelOutput]:
        return list(self.model.generate(requests))

    def loglikelihood(self, requests: list[LoglikRequest]) -> list[ModelOutput]:
        return list(self.model.loglikelihood(requests))

    def fits(self, prompts: list[tuple[str, tuple[Message, ...] | None, int]]) -> list[bool]:
        return [self.model.fits(text, messages, reserve) for text, messages, reserve in prompts]

    def close(self) -> None:
        self.model.close()


@dataclass
class _Slice:
    method: str
    requests: list[Any]


class RayReplicas(Model):
    """`replicas` Ray actors of the backend `spec`, each with `gpus_per_replica` GPUs (0: CPU only)."""

    name = "ray"

    def __init__(
        self,
        spec: str,
        options: ModelOptions,
        replicas: int,
        *,
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
        actor_class = ray.remote(num_cpus=cpus_per_replica, num_gpus=gpus_per_replica)(_Replica)
        self.actors = [actor_class.remote(spec, options) for _ in range(replicas)]
        try:
            described = ray.get([actor.describe.remote() for actor in self.actors])
        except ray.exceptions.RayError as exc:
            self.close()
            raise ModelError(f"a replica of {spec!r} could not start: {_cause(exc)}") from None
        first = described[0]
        self.default_chat = bool(first["default_chat"])
        self._supports: dict[str, bool] = first["supports"]
        self._chunk: dict[str, int] = first["chunk_size"]
        self._checks_length = bool(first["checks_length"])
        self.lost = 0  # replicas that died during the run

    # -- what the runner asks --------------------------------------------------------------------------
    def supports(self, method: str) -> bool:
        return self._supports[method]

    def chunk_size(self, method: str) -> int:
        # The runner waits for a whole chunk before handing over the next: enough for every replica to
        # get SLICES_PER_REPLICA slices of what one takes at once, and of at least MIN_SLICE requests.
        per_slice = max(self._chunk[method], MIN_SLICE)
        return per_slice * max(1, len(self.actors)) * SLICES_PER_REPLICA

    def fits(self, prompt_text: str, messages: tuple[Message, ...] | None = None, reserve: int = 256) -> bool:
        if not self._checks_length:  # the backend fits everything: no round trip per question
            return True
        # One round trip per prompt (milliseconds): a tokenizer on the driver would save it.
        fitted: list[bool] = self._call_any("fits", [(prompt_text, messages, reserve)])
        return fitted[0]

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        return self._fan_out("generate", list(requests))

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        return self._fan_out("loglikelihood", list(requests))

    def close(self) -> None:
        for actor in self.actors:
            self._ray.kill(actor)
        self.actors = []

    # -- distribution ----------------------------------------------------------------------------------
    def _fan_out(self, method: str, requests: list[Any]) -> Iterator[ModelOutput]:
        """Every request answered once: slices go to idle replicas, a dead replica's slice to another."""
        ray = self._ray
        if not requests:
            return
        size = max(1, math.ceil(len(requests) / (len(self.actors) * SLICES_PER_REPLICA)))
        queue = [_Slice(method, requests[i : i + size]) for i in range(0, len(requests), size)]
        running: dict[Any, tuple[Any, _Slice]] = {}
        idle = list(self.actors)
        try:
            while queue or running:
                while queue and idle:
                    actor, piece = idle.pop(0), queue.pop(0)
                    running[getattr(actor, method).remote(piece.requests)] = (actor, piece)
                if not running:
                    raise ModelError(
                        f"every replica of {self.spec!r} died ({self.lost} lost); resume the run"
                    )
                [done], _ = ray.wait(list(running), num_returns=1)
                actor, piece = running.pop(done)
                try:
                    outputs = ray.get(done)
                except ray.exceptions.RayActorError:
                    self.lost += 1
                    self.actors.remove(actor)
                    queue.insert(0, piece)  # asked again of a live replica
                    continue
                except ray.exceptions.RayTaskError as exc:
                    yield from self._finished(running)
                    raise ModelError(f"a replica of {self.spec!r} failed: {_cause(exc)}") from None
                idle.append(actor)
                yield from outputs
        except KeyboardInterrupt:
            yield from self._finished(running)  # answers already computed (and perhaps paid for) are kept
            raise

    def _finished(self, running: dict[Any, tuple[Any, _Slice]]) -> Iterator[ModelOutput]:
        """The outputs of the slices already done, when the run must stop: stored, not asked again."""
        ray = self._ray
        if not running:
            return
        ready, _ = ray.wait(list(running), num_returns=len(running), timeout=0)
        for ref in ready:
            try:
                outputs = ray.get(ref)
            except ray.exceptions.RayError:
                continue
            yield from outputs

    def _call_any(self, method: str, *args: Any) -> Any:
        ray = self._ray
        while self.actors:
            actor = self.actors[0]
            try:
                return ray.get(getattr(actor, method).remote(*args))
            except ray.exceptions.RayActorError:
                self.lost += 1
                self.actors.remove(actor)
        raise ModelError(f"every replica of {self.spec!r} died ({self.lost} lost); resume the run")


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc).splitlines()[0]
