"""The scripted mock backend: returns chosen outputs from a JSONL file, one line per question id.

Line format: {"id": "<question id>", "response": "<text>", "logprobs": {"A": -0.1, ...}, "delay": 0.05}
(`response` for generation, `logprobs` for log-likelihood, `delay` seconds of simulated latency;
`"truncated": true` answers as a reply cut off at the token budget).
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
from kaoshi.models.base import GenerateRequest, LoglikRequest, Model, ModelError, ModelOptions, ModelOutput


@dataclass(frozen=True)
class ScriptedOutput:
    response: str | None
    logprobs: dict[str, float] | None
    delay: float
    truncated: bool = False


def read_script(path: Path) -> dict[str, ScriptedOutput]:
    """Parse a mock script; every bad line is reported with file, line and field."""
    script: dict[str, ScriptedOutput] = {}
    errors: list[RowError] = []
    file = str(path)
    for item in iter_jsonl(path, read_text(path)):
        if isinstance(item, RowError):
            errors.append(item)
            continue
        line, record = item
        try:
            question_id, output = _parse_line(record)
        except ValueError as exc:
            field, _, reason = str(exc).partition("|")
            errors.append(RowError(file, line, field or None, reason))
            continue
        if question_id in script:
            errors.append(RowError(file, line, "id", f"duplicate id {question_id!r}"))
            continue
        script[question_id] = output
    if errors:
        raise DataError(f"{len(errors)} invalid line(s) in mock script {file}", tuple(errors))
    return script


def _parse_line(record: Any) -> tuple[str, ScriptedOutput]:
    if not isinstance(record, dict):
        raise InputError("|expected a JSON object")
    question_id = record.get("id")
    if isinstance(question_id, bool) or not isinstance(question_id, (str, int)):
        raise InputError("id|missing or not a string")
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
    return str(question_id), ScriptedOutput(response, logprobs, float(delay), truncated)


class MockModel(Model):
    name = "mock"
    default_batch_size = 8

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
        found = self.script.get(request_id)
        if found is None:
            return f"mock script {self.path} has no line for question id {request_id!r}"
        if found.delay:
            time.sleep(found.delay)
        return found

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            found = self._lookup(request.id)
            if isinstance(found, str):
                yield ModelOutput(request.id, error=found)
            elif found.response is None:
                yield ModelOutput(request.id, error=f"mock line for {request.id!r} has no 'response'")
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
                yield ModelOutput(request.id, error=f"mock line for {request.id!r} has no 'logprobs'")
            else:
                scores = {c: found.logprobs[c] for c in request.continuations if c in found.logprobs}
                yield ModelOutput(request.id, logprobs=scores, latency_s=found.delay)
