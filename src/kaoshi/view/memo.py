"""Results the viewer keeps while what they were computed from is unchanged: a run's summary of 200,000
samples takes seconds, and its page is opened again and again. Keys carry the store's state
(kaoshi.view.state), so any change to the store makes its entries miss and be computed afresh."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

Value = TypeVar("Value")


class Memo:
    """The `size` most recently used results, shared by the viewer's request threads."""

    def __init__(self, size: int = 24) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable, compute: Callable[[], Value]) -> Value:
        """The value kept under `key`, else `compute()` (outside the lock: other pages are not held up)."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                found: Value = self._kept[key]
                return found
        value = compute()
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value
