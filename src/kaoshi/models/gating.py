"""Requests let out one at a time: a run hands its backend a `GatedRequests`, whose iteration asks before
each request whether the run may still send one (its lease is still this process's, its store still
takes answers). A backend that takes its requests one by one (API calls, llama.cpp, the mock) is stopped
before its next request; one that reads them all at once (to batch them) has them all in flight. A
backend that hands requests on to other processes (Ray replicas) asks `admit()` itself before it lets
one more be sent, and names what it never sent with `withhold`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar, overload


class _Request(Protocol):
    @property
    def id(self) -> str: ...


R = TypeVar("R", bound=_Request)


class GatedRequests(Sequence[R]):
    """`items`, iterated one at a time while `admit()` says yes; `withheld` names those kept back (never
    sent: no answer is owed for them)."""

    def __init__(self, items: Sequence[R], admit: Callable[[], bool]) -> None:
        self._items = list(items)
        self._admit = admit
        self.withheld: set[str] = set()

    def admit(self) -> bool:
        """Whether one more request may be sent now."""
        return self._admit()

    def withhold(self, ids: Sequence[str]) -> None:
        """Record requests that were taken but never sent."""
        self.withheld.update(ids)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> R: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[R]: ...

    def __getitem__(self, index: int | slice) -> R | Sequence[R]:
        return self._items[index]

    def __iter__(self) -> Iterator[R]:
        for position, item in enumerate(self._items):
            if not self._admit():
                self.withheld.update(kept.id for kept in self._items[position:])
                return
            yield item
