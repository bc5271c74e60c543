"""A paused API run whose lease is taken over sends nothing more: its openai backend takes each request
only once a concurrency slot is free, through the run's gate (kaoshi.models.gating)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import interruptions


@pytest.mark.slow
def test_a_paused_api_run_asks_again_only_its_requests_in_flight(tmp_path: Path) -> None:
    repeats = interruptions.openai_paused(tmp_path)
    # in flight: at most --concurrency 8 (some may not have reached the server when A paused); answered
    # and not stored yet: waiting for A's run loop
    assert repeats.asked_again <= 8 + repeats.unstored, repeats
