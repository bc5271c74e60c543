"""Retry timing for remote backends: exponential backoff with full jitter, honouring Retry-After."""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

# Statuses worth asking again: timeouts, conflicts, rate limits, and server or proxy failures (5xx,
# including Cloudflare's 52x) except the two that say the request itself can never succeed.
RETRYABLE_STATUS = frozenset({408, 409, 429})
PERMANENT_SERVER_STATUS = frozenset({501, 505})  # Not Implemented, HTTP Version Not Supported


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status is transient, so the same request may succeed if sent again."""
    return status in RETRYABLE_STATUS or (500 <= status < 600 and status not in PERMANENT_SERVER_STATUS)


@dataclass(frozen=True)
class Backoff:
    base_s: float = 0.5
    cap_s: float = 30.0
    # A server may ask for a long pause; honour it, but never hang a run for more than this.
    max_retry_after_s: float = 600.0

    def delay(
        self,
        attempt: int,
        rng: random.Random,
        retry_after: float | None = None,
        max_wait_s: float | None = None,
    ) -> float:
        """Seconds to wait before retry number `attempt` (0-based); a server's Retry-After wins, up to
        `max_wait_s` (the run's --max-wait) and never more than max_retry_after_s."""
        if retry_after is not None:
            cap = self.max_retry_after_s if max_wait_s is None else min(max_wait_s, self.max_retry_after_s)
            return min(max(retry_after, 0.0), cap)
        return rng.uniform(0, min(self.cap_s, self.base_s * 2**attempt))


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds: either a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
