"""The fields of an OpenAI-compatible generation request that say how to decode: sampling, seed, the
thinking switch, and a user's own fields (--extra-body) over them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kaoshi.models.base import Sampling

# What --thinking on|off sends on a chat request: the chat template's switch, which vLLM and SGLang pass
# to the template (Qwen3, DeepSeek-V3.1, GLM-4.5 templates read it), and DashScope's (Alibaba Model
# Studio) own top-level switch. A server that knows neither ignores them or refuses the request; then
# --extra-body sends what it reads instead.
THINKING_FIELDS = ("chat_template_kwargs.enable_thinking", "enable_thinking")


def decoding_fields(sampling: Sampling, default_seed: int, *, chat: bool) -> dict[str, Any]:
    """temperature (0: greedy), top_p / top_k where set (top_k is read by vLLM, SGLang, llama.cpp's
    server and DashScope; OpenAI's own API has none), the request's seed, and the thinking switch (chat
    requests only: a completion has no chat template)."""
    fields: dict[str, Any] = {"temperature": sampling.temperature}
    if sampling.top_p is not None:
        fields["top_p"] = sampling.top_p
    if sampling.top_k is not None:
        fields["top_k"] = sampling.top_k
    fields["seed"] = default_seed if sampling.seed is None else sampling.seed
    if chat and sampling.thinking is not None:
        fields["chat_template_kwargs"] = {"enable_thinking": sampling.thinking}
        fields["enable_thinking"] = sampling.thinking
    return fields


def merged(body: Mapping[str, Any], extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """`body` with `extra`'s fields over it; an object in both is merged field by field (so
    --extra-body '{"chat_template_kwargs": {...}}' adds to the thinking switch, not replaces it)."""
    result = dict(body)
    for key, value in (extra or {}).items():
        if isinstance(value, Mapping) and isinstance(result.get(key), Mapping):
            result[key] = merged(result[key], value)
        else:
            result[key] = value
    return result
