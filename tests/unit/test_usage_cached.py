"""The prompt tokens a server read from its prompt cache (issue 43's ledger): read from each provider's
usage field as it sends it, never an answer lost over a bad one."""

from __future__ import annotations

from typing import Any

import pytest

from kaoshi.models.openai_replies import cached_tokens


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"prompt_tokens": 2006, "prompt_tokens_details": {"cached_tokens": 1920}}, 1920),  # OpenAI, vLLM
        ({"prompt_tokens": 2006, "prompt_tokens_details": {"cached_tokens": 0}}, 0),  # said: none cached
        ({"prompt_cache_hit_tokens": 1024, "prompt_cache_miss_tokens": 982}, 1024),  # DeepSeek
        ({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": None}}, None),
        (
            {"prompt_tokens": 10, "prompt_tokens_details": {"audio_tokens": 0}},
            None,
        ),  # details, no cache field
        ({"prompt_tokens": 10}, None),  # not said
        ({"prompt_tokens_details": {"cached_tokens": -3}}, None),
        ({"prompt_tokens_details": {"cached_tokens": "1920"}}, None),  # a string: not a count
        ({"prompt_tokens_details": {"cached_tokens": True}}, None),
        ({"prompt_tokens_details": "1920"}, None),
        ({"prompt_cache_hit_tokens": 2.5}, None),
    ],
)
def test_cached_prompt_tokens_as_each_provider_reports_them(
    usage: dict[str, Any], expected: int | None
) -> None:
    assert cached_tokens({"usage": usage}) == expected


@pytest.mark.parametrize("data", [{}, {"usage": None}, {"usage": "x"}, {"usage": []}])
def test_a_reply_without_usage_has_no_cached_count(data: dict[str, Any]) -> None:
    assert cached_tokens(data) is None
