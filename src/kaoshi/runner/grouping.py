"""Answers that come from a backend together are committed together: one transaction for the answers a
batch returns, instead of one each (a commit costs about as long as an instant model takes to answer). No
answer is reported stored before its transaction has committed."""

from __future__ import annotations

import time
from collections.abc import Callable

from kaoshi.store.errors import StoreError
from kaoshi.store.records import SampleRecord
from kaoshi.store.sqlite import Store

# An answer that came within this long of being asked for came from what the backend already had (a batch
# it computed, an instant model): such answers are grouped. Once one took longer the backend is working,
# and from then on each answer of the chunk is committed as it arrives, so that none waits uncommitted on
# the backend's work.
INSTANT_S = 0.001
# A group is committed once it holds this many answers, or once its first has waited this long.
GROUP_MAX = 256
GROUP_WAIT_S = 0.05


class AnswerGroup:
    """The answers of one chunk not committed yet; `report` is called with each once it is committed."""

    def __init__(self, store: Store, run: str, report: Callable[[SampleRecord], None]) -> None:
        self._store, self._run, self._report = store, run, report
        self._samples: list[SampleRecord] = []
        self._since = 0.0
        self._grouping = True
        self._refused = False

    def add(self, sample: SampleRecord, waited_s: float) -> None:
        """Keep an answer that took `waited_s` to come, and commit the group when it is due; StoreError as
        for commit."""
        if waited_s >= INSTANT_S:
            self._grouping = False
        if not self._samples:
            self._since = time.monotonic()
        self._samples.append(sample)
        due = len(self._samples) >= GROUP_MAX or time.monotonic() - self._since >= GROUP_WAIT_S
        if due or not self._grouping:
            self.commit()

    def commit(self) -> None:
        """Commit the answers kept, then report them. A StoreError (the store refused them: those it could
        not write stay in its memory, written by its next write or on close) reports those written before
        the refusal; nothing is reported after one, and each later answer goes to the store at once."""
        samples, self._samples = self._samples, []
        if not samples:
            return
        try:
            self._store.add_samples(self._run, samples)
        except StoreError:
            if not self._refused:
                self._refused, self._grouping = True, False
                # the store commits its queue in order: the first ones of the group went in
                written = len(samples) - self._store.unwritten_answers
                for sample in samples[: max(0, written)]:
                    self._report(sample)
            raise
        if not self._refused:
            for sample in samples:
                self._report(sample)
