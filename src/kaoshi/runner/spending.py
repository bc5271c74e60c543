"""`kaoshi run --max-cost X`: what a run has spent (its stored answers' tokens at a price, the answers of
earlier sessions too), and no request sent once it has reached the cap. What is in flight then still
comes back and is stored, so a run stops within the cost of the requests in flight past the cap; the same
command without the cap, or with a higher one, goes on."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kaoshi.analysis.cost import Price
from kaoshi.store.records import SampleRecord


class CostCapReached(Exception):
    """The run reached its cost cap: nothing more was sent (what was in flight is stored)."""

    def __init__(self, spent: float, cap: float) -> None:
        super().__init__(f"spent {spent:,.4f} of the {cap:,.4f} the run may cost")
        self.spent, self.cap = spent, cap


@dataclass
class Spending:
    """What a run has spent at `price`, and whether it may send more under `cap`."""

    price: Price
    cap: float
    spent: float = 0.0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, sample: SampleRecord) -> None:
        """An answer stored: its tokens, as its server counted them, at the price."""
        cost = self.price.cost(sample.tokens_in or 0, sample.tokens_out or 0, sample.tokens_cached or 0)
        with self._lock:
            self.spent += cost

    def add_stored(self, prompt: int, completion: int, cached: int) -> None:
        """What the run's answers stored before this session spent (their summed tokens)."""
        with self._lock:
            self.spent += self.price.cost(prompt, completion, cached)

    def admits(self) -> bool:
        """Whether one more request may be sent: the run has not reached its cap."""
        with self._lock:
            return self.spent < self.cap

    def reached(self) -> CostCapReached:
        with self._lock:
            return CostCapReached(self.spent, self.cap)
