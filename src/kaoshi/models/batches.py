"""What a backend offers when its requests can go through a provider's batch endpoint (kaoshi run --batch;
kaoshi.runner.batching sends them): a batch's state as the provider describes it, what a finished batch
gave, and the calls the runner makes (kaoshi.models.openai_batch implements them for OpenAI's Batch API and
the providers that copy it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kaoshi.models.base import GenerateRequest, ModelOutput

# OpenAI's limits on one input file: 50,000 requests and 200 MB (older documentation: 100 MB; a margin is
# kept below the newer one). A run with more is sent as several batches.
MAX_LINES = 50_000
MAX_BYTES = 190 * 1024 * 1024
# The statuses after which a batch changes no more; `expired` and `cancelled` still return what completed.
FINAL = frozenset({"completed", "failed", "expired", "cancelled"})
# The window a batch is given; the only one OpenAI offers.
WINDOW = "24h"


@dataclass(frozen=True)
class BatchState:
    """A batch as the provider last described it."""

    id: str
    status: str
    input_file: str | None
    output_file: str | None
    error_file: str | None
    created_at: float
    total: int
    completed: int
    failed: int
    metadata: Mapping[str, str]
    errors: str | None  # why a failed batch failed, in words

    @property
    def final(self) -> bool:
        return self.status in FINAL

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> BatchState:
        counts = data.get("request_counts") or {}
        errors = data.get("errors") or {}
        reasons = [
            f"{e.get('code') or 'error'}: {e.get('message') or ''}".strip(": ")
            + (f" (line {e['line']})" if e.get("line") is not None else "")
            for e in (errors.get("data") or [] if isinstance(errors, Mapping) else [])
            if isinstance(e, Mapping)
        ]
        metadata = data.get("metadata") or {}
        return cls(
            id=str(data["id"]),
            status=str(data.get("status") or "unknown"),
            input_file=data.get("input_file_id"),
            output_file=data.get("output_file_id"),
            error_file=data.get("error_file_id"),
            created_at=float(data.get("created_at") or 0),
            total=int(counts.get("total") or 0),
            completed=int(counts.get("completed") or 0),
            failed=int(counts.get("failed") or 0),
            metadata={str(k): str(v) for k, v in metadata.items()} if isinstance(metadata, Mapping) else {},
            errors="; ".join(reasons) or None,
        )


@dataclass(frozen=True)
class BatchResults:
    """What a finished batch gave: each answered request's output, and why each other request got none
    (its line failed, the batch expired or was cancelled before it, or its output was missing)."""

    outputs: dict[str, ModelOutput]
    failed: dict[str, str]


class BatchEndpoint(Protocol):
    """A provider's batch endpoint for one model: input lines, files, batches and their results."""

    @property
    def where(self) -> str: ...

    def endpoint_of(self, request: GenerateRequest) -> str: ...

    def line(self, request: GenerateRequest) -> bytes: ...

    def upload(self, content: bytes, filename: str) -> str: ...

    def create(self, input_file: str, endpoint: str, metadata: Mapping[str, str]) -> BatchState: ...

    def get(self, batch_id: str) -> BatchState: ...

    def cancel(self, batch_id: str) -> BatchState: ...

    def listed(self, since: float) -> Iterator[BatchState]: ...

    def content(self, file_id: str) -> bytes: ...

    def results(self, state: BatchState, requests: Mapping[str, GenerateRequest]) -> BatchResults: ...


def parts(lines: Sequence[bytes], max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> list[int]:
    """Where the lines are cut into input files within a provider's limits: each part's end."""
    ends: list[int] = []
    count = size = 0
    for position, line in enumerate(lines):
        if count and (count + 1 > max_lines or size + len(line) > max_bytes):
            ends.append(position)
            count = size = 0
        count += 1
        size += len(line)
    if count:
        ends.append(len(lines))
    return ends
