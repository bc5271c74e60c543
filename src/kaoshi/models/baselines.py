"""Baselines: uniform random guessing over valid answers (seeded), and a constant answer."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence

from kaoshi.models.base import (
    SAMPLING_OPTIONS,
    Capabilities,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)

_NO_ANSWER = "（基线模型不作答）"
# A baseline decodes nothing, so every decoding option holds trivially: a run at a model's sampling settings
# runs its baselines with the same command. The random pick is already its own per sample (the request id,
# unique per sample, seeds it with the run's seed), so the request's seed is not read: a greedy run's picks
# stay what they always were.
_EVERY_OPTION = frozenset(SAMPLING_OPTIONS)
_BOTH_METHODS = frozenset({"generate", "loglik"})


class RandomModel(Model):
    """Picks uniformly among a question's valid answers; the same seed and id always give the same pick."""

    name = "random"
    default_batch_size = 64
    capabilities = Capabilities(
        description="guesses uniformly among a question's valid answers, seeded by --seed and the question",
        methods=_BOTH_METHODS,
        sampling=_EVERY_OPTION,
    )

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)

    def _rng(self, request_id: str) -> random.Random:
        return random.Random(f"{self.options.seed}:{request_id}")

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            text = self._rng(request.id).choice(request.choices) if request.choices else _NO_ANSWER
            yield ModelOutput(request.id, text=text)

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            rng = self._rng(request.id)
            scores = {c: math.log(rng.random() + 1e-12) for c in request.continuations}
            yield ModelOutput(request.id, logprobs=scores)


class ConstantModel(Model):
    """Always answers the same text, e.g. `constant:A` or `constant:正确`."""

    name = "constant"
    default_batch_size = 64
    capabilities = Capabilities(
        description="always answers the same text (constant:A, constant:正确)",
        argument="ANSWER",
        methods=_BOTH_METHODS,
        sampling=_EVERY_OPTION,
    )

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        _, _, answer = spec.partition(":")
        if not answer:
            raise ModelError("constant model needs an answer, e.g. --model constant:A")
        self.answer = answer

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            yield ModelOutput(request.id, text=self.answer)

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            scores = {c: (0.0 if c == self.answer else -100.0) for c in request.continuations}
            yield ModelOutput(request.id, logprobs=scores)
