"""The options of a run as typed keyword arguments: `kaoshi.evaluate(exam, model, **RunKeywords)` and
`kaoshi.load_model(spec, **BackendKeywords)`, so that a type checker names a misspelled or mistyped option.

Each key is a field of kaoshi.RunConfig or kaoshi.models.ModelOptions with the field's type, widened only
where the dataclass takes more than it keeps (a path as a str, shard as "I/N", exemplars as any
sequence); tests/unit/test_run_keywords.py keeps the keys and types equal to the fields."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from kaoshi.models.base import ModelOptions

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # a dependency of kaoshi before 3.11 (pyproject.toml)
    from typing_extensions import Unpack

__all__ = ["BackendKeywords", "RunKeywords", "Unpack"]


class BackendKeywords(TypedDict, total=False):
    """kaoshi.models.ModelOptions's fields: what a model is loaded with."""

    seed: int
    batch_size: int | None
    adapter: str | Path | None
    base_url: str | tuple[str, ...] | None
    api_key_env: str
    concurrency: int
    requests_per_minute: float | None
    timeout_s: float
    max_retries: int
    max_wait_s: float | None
    max_reply_chars: int
    prompts_per_request: int
    extra_body: Mapping[str, Any] | None
    device: str
    dtype: str
    max_length: int | None
    trust_remote_code: bool
    tensor_parallel_size: int
    ray: bool
    replicas: int
    gpus_per_replica: float
    ray_address: str | None


class RunKeywords(BackendKeywords, total=False):
    """kaoshi.RunConfig's fields, and the backend's (BackendKeywords): kaoshi.evaluate's options."""

    method: str
    prompt: str | None
    shots: int | None
    chat: bool | None
    system: str | None
    exemplars: Sequence[str]
    exemplars_file: str | Path | None
    limit: int | None
    limit_total: int | None
    sample: int | None
    shuffle_options: int | None
    shard: tuple[int, int] | str | None
    backend: ModelOptions
    allow_overlap: bool
    temperature: float
    top_p: float | None
    top_k: int | None
    thinking: bool | None
    repeats: int
    reuse_from: str | None
    max_new_tokens: int | None
    max_new_tokens_open: int | None
    multi_policy: str | None
    partial_credit: float
    standard_scores: Mapping[str, float]
    llm_extractor: str | None
