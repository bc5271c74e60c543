"""`kaoshi run --max-cost X`: what a run has spent (its stored answers' tokens at a price, the answers of
earlier sessions too), and no request sent once it has reached the cap. What is in flight then still
comes back and is stored, so a run stops within the cost of the requests in flight past the cap; the same
command without the cap, or with a higher one, goes on."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kaoshi.analysis.cost import Price, Usage
from kaoshi.store.records import SampleRecord


class CostCapReached(Exception):
    """The run reached its cost cap: nothing more was sent (what was in flight is stored)."""

    def __init__(self, spent: float, cap: float) -> None:
        super().__init__(f"spent {spent:,.4f} of the {cap:,.4f} the run may cost")
        self.spent, self.cap = spent, cap


@dataclass
class Spending:
    """What a run has spent at `price`, and whether it may send more under `cap`.

    A backend takes its next request while the answers before it are still on their way to the store (a
    pipeline, a queue behind a busy machine), so counting only stored answers let a run pass its cap by
    every answer in that queue. A request let out is therefore counted at the mean cost of the answers so
    far until its own answer is stored: the run stops within about the cost of its concurrent requests."""

    price: Price
    cap: float
    spent: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._answers = 0  # stored this session, and what they cost: the mean cost of one
        self._session = 0.0
        self._in_flight = 0  # let out, not stored yet
        self._reserved = 0.0  # what requests let out before any answer had a cost are expected to cost
        self._reserved_count = 0
        self._stored_mean = 0.0  # of the answers in the store when last synced

    def add(self, sample: SampleRecord) -> None:
        """An answer stored: its tokens, as its server counted them, at the price."""
        cost = sample_cost(self.price, sample)
        with self._lock:
            self.spent += cost
            self._session += cost
            self._answers += 1
            self._settle_one()

    def sync(self, usage: Usage) -> None:
        """What the run's paid answers in the store cost (theirs and other processes' working beside this
        one, --join): the run's spending from now on, and the mean cost of an answer until this session
        has its own."""
        with self._lock:
            self.spent = usage.cost(self.price)
            self._stored_mean = self.spent / usage.paid if usage.paid else 0.0

    def admits(self, expected: float | None = None) -> bool:
        """Whether one more request may be sent: the run, with what it has let out and not yet stored,
        stays under its cap. A request admitted is counted as in flight, at the mean cost of an answer, or
        at `expected` (its own estimate) before any answer has a cost: a batch's lines are all let out
        before the first answer comes back."""
        with self._lock:
            mean = self._session / self._answers if self._answers else self._stored_mean
            if not mean and expected is not None:
                if self.spent + self._reserved + expected > self.cap:
                    return False
                self._reserved += expected
                self._reserved_count += 1
                return True
            if self.spent + self._reserved + self._in_flight * mean >= self.cap:
                return False
            self._in_flight += 1
            return True

    def release(self, count: int) -> None:
        """`count` requests let out will bring no answer (a batch's failed lines): no longer in flight."""
        with self._lock:
            for _ in range(count):
                self._settle_one()

    def _settle_one(self) -> None:
        """One request let out is settled (answered or failed): the earliest reservation goes first."""
        if self._reserved_count:
            self._reserved -= self._reserved / self._reserved_count
            self._reserved_count -= 1
        else:
            self._in_flight = max(0, self._in_flight - 1)

    def reached(self) -> CostCapReached:
        with self._lock:
            return CostCapReached(self.spent, self.cap)


def sample_cost(price: Price, sample: SampleRecord) -> float:
    """What one stored answer cost at `price`: its tokens as its server counted them, at the batch share
    of the price where a provider's batch gave it."""
    tokens = (sample.tokens_in or 0, sample.tokens_out or 0, sample.tokens_cached or 0)
    return price.cost(*tokens, batch=sample.batch_id is not None)
