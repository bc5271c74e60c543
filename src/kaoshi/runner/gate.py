"""What a run lets its backend send: each request as the backend takes it (kaoshi.models.gating), and only
while this process still holds the run's lease and nothing has stopped the run (a store that can no
longer be written, the run's cost cap reached)."""

from __future__ import annotations

from collections.abc import Sequence

from kaoshi.models.gating import GatedRequests, R
from kaoshi.runner.spending import CostCapReached, Spending
from kaoshi.store.errors import StoreError
from kaoshi.store.leases import Lease


class RequestGate:
    """Lets requests out while the run goes on; `stopped` says why it no longer does. `spending`: the run's
    cost cap (--max-cost), reached before a request is let out."""

    def __init__(self, lease: Lease, spending: Spending | None = None) -> None:
        self._lease = lease
        self._spending = spending
        self.stopped: StoreError | CostCapReached | None = None

    def admit(self, expected: float | None = None) -> bool:
        """Whether one more request may be sent now (a lease check: cheap while its heartbeat is fresh);
        `expected`: what it will cost where no answer has told yet (Spending.admits)."""
        if self.stopped is not None:
            return False
        try:
            self._lease.confirm()
        except StoreError as exc:
            self.stopped = exc
            return False
        if self._spending is not None and not self._spending.admits(expected):  # counts it in flight if so
            self.stopped = self._spending.reached()
            return False
        return True

    def close(self, why: StoreError) -> None:
        """Send nothing more (what is in flight still comes back)."""
        if self.stopped is None:
            self.stopped = why

    def requests(self, items: Sequence[R]) -> GatedRequests[R]:
        return GatedRequests(items, self.admit)
