"""The scripted mock backend: returns chosen outputs from a JSONL file, one line per question id.

Line format: {"id": "<question id>", "response": "<text>", "logprobs": {"A": -0.1, ...}, "delay": 0.05}
(`response` for generation, `logprobs` for log-likelihood, `delay` seconds of simulated latency;
`"truncated": true` answers as a reply cut off at the token budget). `"sample": k` (an integer >= 0) makes
a line the answer to the question's k-th sample only (--repeats; the first is 0): a request for sample k
reads the line for (id, k) where there is one, else the line for the id without a sample.

The mock answers what its script says, whatever the sampling asked for: it honours every decoding option.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.data.errors import DataError, RowError
from kaoshi.data.rawio import iter_jsonl, read_text
from kaoshi.errors import InputError
from kaoshi.models.base import (
    SAMPLING_OPTIONS,
    Capabilities,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
    question_of,
)


@dataclass(frozen=True)
class ScriptedOutput:
    response: str | None
    logprobs: dict[str, float] | None
    delay: float
    truncated: bool = False


# A script line's key: the question id, and the sample it answers (None: every sample without a line of
# its own).
ScriptKey = tuple[str, int | None]


def read_script(path: Path) -> dict[ScriptKey, ScriptedOutput]:
    """Parse a mock script; every bad line is reported with file, line and field."""
    script: dict[ScriptKey, ScriptedOutput] = {}
    errors: list[RowError] = []
    file = str(path)
    for item in iter_jsonl(path, read_text(path)):
        if isinstance(item, RowError):
            errors.append(item)
            continue
        line, record = item
        try:
            key, output = _parse_line(record)
        except ValueError as exc:
            field, _, reason = str(exc).partition("|")
            errors.append(RowError(file, line, field or None, reason))
            continue
        if key in script:
            question_id, sample = key
            which = "" if sample is None else f" sample {sample}"
            errors.append(RowError(file, line, "id", f"duplicate id {question_id!r}{which}"))
            continue
        script[key] = output
    if errors:
        raise DataError(f"{len(errors)} invalid line(s) in mock script {file}", tuple(errors))
    return script


def _parse_line(record: Any) -> tuple[ScriptKey, ScriptedOutput]:
    if not isinstance(record, dict):
        raise InputError("|expected a JSON object")
    question_id = record.get("id")
    if isinstance(question_id, bool) or not isinstance(question_id, (str, int)):
        raise InputError("id|missing or not a string")
    sample = record.get("sample")
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 0):
        raise InputError("sample|must be a whole number >= 0 (the sample's index, the first is 0)")
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        raise InputError("response|must be text")
    logprobs = record.get("logprobs")
    if logprobs is not None:
        if not isinstance(logprobs, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) and v <= 0
            for v in logprobs.values()
        ):
            raise InputError("logprobs|must map option -> log-probability (a number <= 0)")
        logprobs = {str(k): float(v) for k, v in logprobs.items()}
    if response is None and logprobs is None:
        raise InputError("response|a line needs 'response' or 'logprobs'")
    delay = record.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay < 0:
        raise InputError("delay|must be a number of seconds >= 0")
    truncated = record.get("truncated", False)
    if not isinstance(truncated, bool):
        raise InputError("truncated|must be true or false")
    return (str(question_id), sample), ScriptedOutput(response, logprobs, float(delay), truncated)


class MockModel(Model):
    name = "mock"
    default_batch_size = 8
    capabilities = Capabilities(
        description="scripted outputs: one JSON line per question (and sample) with its response or logprobs",
        argument="FILE",
        methods=frozenset({"generate", "loglik"}),
        sampling=frozenset(SAMPLING_OPTIONS),
    )

    def __init__(self, spec: str, options: ModelOptions) -> None:
        super().__init__(spec, options)
        _, _, file = spec.partition(":")
        if not file:
            raise ModelError("mock model needs a script file: --model mock:FILE.jsonl")
        path = Path(file)
        if not path.is_file():
            raise ModelError(f"mock script {file} does not exist")
        self.path = path
        self.script = read_script(path)

    def _lookup(self, request_id: str) -> ScriptedOutput | str:
        question_id, sample = question_of(request_id)
        found = self.script.get((question_id, sample))
        if found is None:
            found = self.script.get((question_id, None))
        if found is None:
            return f"mock script {self.path} has no line for {_named(request_id)}"
        if found.delay:
            time.sleep(found.delay)
        return found

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            found = self._lookup(request.id)
            if isinstance(found, str):
                yield ModelOutput(request.id, error=found)
            elif found.response is None:
                yield ModelOutput(request.id, error=f"mock line for {_named(request.id)} has no 'response'")
            else:
                yield ModelOutput(
                    request.id, text=found.response, latency_s=found.delay, truncated=found.truncated
                )

    def loglikelihood(self, requests: Sequence[LoglikRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            found = self._lookup(request.id)
            if isinstance(found, str):
                yield ModelOutput(request.id, error=found)
            elif found.logprobs is None:
                yield ModelOutput(request.id, error=f"mock line for {_named(request.id)} has no 'logprobs'")
            else:
                scores = {c: found.logprobs[c] for c in request.continuations if c in found.logprobs}
                yield ModelOutput(request.id, logprobs=scores, latency_s=found.delay)


def _named(request_id: str) -> str:
    """A request as a script names it: "question id 'q'", with its sample after the first."""
    question_id, sample = question_of(request_id)
    return f"question id {question_id!r}" + (f" sample {sample}" if sample else "")
