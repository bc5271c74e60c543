"""Backends used by tests through the `py:MODULE:CLASS:ARG` plugin spec (test code, not product code)."""

from __future__ import annotations

import time
from collections.abc import Collection, Iterator, Mapping, Sequence

from kaoshi.models import GenerateRequest, LoglikRequest, Model, ModelOptions, ModelOutput


class CountingModel(Model):
    """Appends every requested id to the log file named by ARG (flushed at once), then answers slowly."""

    default_batch_size = 1
    pause_s = 0.05

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        self.log = open(spec, "a", encoding="utf-8")  # noqa: SIM115 - kept open for the run

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            self.log.write(request.id + "\n")
            self.log.flush()
            time.sleep(self.pause_s)
            yield ModelOutput(request.id, text=f"答案：{request.choices[0] if request.choices else '文本'}")

    def close(self) -> None:
        self.log.close()


class SlowCountingModel(CountingModel):
    """CountingModel at 0.2 s an answer: a run of the sample exam lasts long enough for a second process."""

    pause_s = 0.2


class LoglikOnlyModel(Model):
    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            yield ModelOutput(request.id, logprobs={c: -1.0 for c in request.continuations})


class ReversedModel(Model):
    """Yields a batch's outputs in reverse order and drops the last request, like an unreliable server."""

    default_batch_size = 4

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in list(reversed(requests))[1:]:
            yield ModelOutput(request.id, text="答案：A")


class UnloadableModel(Model):
    """Fails as it loads, like weights that would take minutes: a command that gets past it loaded it."""

    def __init__(self, spec: str, options: ModelOptions) -> None:
        raise RuntimeError("UnloadableModel was loaded")


class BudgetEchoModel(Model):
    """Answers every question with the first candidate and writes the token budget it was given."""

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            first = request.choices[0] if request.choices else "文本"
            yield ModelOutput(request.id, text=f"答案：{first}\nbudget={request.max_new_tokens}")


class RoutedModel(Model):
    """Answers every question with its first candidate; the ids in `routed` (served model -> ids) come
    back saying another model answered them, as from a gateway that routed them elsewhere."""

    def __init__(self, spec: str, options: ModelOptions, routed: Mapping[str, Collection[str]]) -> None:
        super().__init__(spec, options)
        self.served = {question: model for model, ids in routed.items() for question in ids}

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            first = request.choices[0] if request.choices else "文本"
            served = self.served.get(request.id)
            yield ModelOutput(request.id, text=f"答案：{first}", served_model=served)


class ReasoningModel(Model):
    """Answers every question with its first candidate; the ids in `reasoned` come back with reasoning
    beside the answer text, as a reasoning model's `reasoning_content`, that argues for another answer
    (its last candidate) and holds markup, so a reader of it for the answer or as HTML shows."""

    def __init__(self, spec: str, options: ModelOptions, reasoned: Collection[str]) -> None:
        super().__init__(spec, options)
        self.reasoned = set(reasoned)

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            first = request.choices[0] if request.choices else "文本"
            reasoning = None
            if request.id in self.reasoned:
                reasoning = f"<b>想一想</b>：答案是{request.choices[-1] if request.choices else '别的'}"
            yield ModelOutput(request.id, text=f"答案：{first}", reasoning=reasoning)
