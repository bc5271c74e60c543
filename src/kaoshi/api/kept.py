"""A board's comparison taken from what the store keeps of it (kaoshi.store.summaries): `kaoshi leaderboard`
and the viewer's leaderboard read ten runs of 100,000 samples without pairing a million questions again,
for as long as the runs' rows are as they were when counted.

What is kept, per run of a board (its kind names the runs, in order): the grader folded in, the run's
samples counted kind by kind on the common questions (score_kinds) and its coverage counts; with the first
run, the pairing (the common questions, how many every run graded, the ids holding different questions).
The comparison is made from them by the code that makes it from what SQLite counts
(kaoshi.api.comparing.counted_comparison), so the numbers are the same: the tests hold both equal, after
each kind of change to a run.

A run that changed since is counted again: alone, on the same questions, when only its grades changed (a
judge's: pairing reads no grade); otherwise every run, as counted_comparison counts them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from kaoshi.api.comparing import CountedSummary, counted_comparison, open_types
from kaoshi.report.compare import ComparedRuns
from kaoshi.results.aggregate import RunSummary
from kaoshi.store import RunRecord, Store
from kaoshi.store.columns import Kind
from kaoshi.store.coverage import Coverage, counted_coverage, key_coverage
from kaoshi.store.pairing import KeyPairing, QuestionKey
from kaoshi.store.rows import dumps
from kaoshi.store.summaries import (
    KeptSummary,
    kinds_from_json,
    kinds_to_json,
    pairing_from_json,
    pairing_to_json,
)

# What is kept, in which form: a kaoshi that keeps it otherwise uses another number.
_FORMAT = 1
Payload = dict[str, Any]


def board_kind(records: Sequence[RunRecord]) -> str:
    """The kind a board's counts are kept under: its runs in order (the first's order is the pairing's)
    and the question types a grader scores (whose points a run's counts fold in)."""
    described = [_FORMAT, open_types(), [run.name for run in records]]
    return "board " + hashlib.sha256(dumps(described).encode()).hexdigest()


def kept_comparison(
    store: Store,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    *,
    keep: bool = True,
) -> ComparedRuns | None:
    """counted_comparison without per-question outcomes (what a board shows), from what the store keeps
    of these runs while it is theirs; counted again where it is not, and kept when `keep` and the store
    can be written (kaoshi.store.Store.keep_summaries). None as for counted_comparison."""
    if any(run.spec.repeats > 1 for run in records):
        return None
    kind = board_kind(records)
    kept = store.kept_summaries(kind, [run.name for run in records])
    first = kept.get(records[0].name) if records else None
    if len(kept) == len(records) and first is not None and "pairing" in first.payload:
        pairing = pairing_from_json(first.payload["pairing"])
        stale = [
            (run, grader)
            for run, grader in zip(records, graders, strict=True)
            if not (kept[run.name].current and kept[run.name].payload["grader"] == grader)
        ]
        payloads = {name: one.payload for name, one in kept.items()}
        if stale:
            recounted = _recounted(store, kind, kept, stale, pairing, keep=keep)
            payloads = {**payloads, **recounted} if recounted is not None else {}
        if payloads:
            return _compared(records, graders, summarize, payloads, pairing)
    return _counted(store, kind, records, graders, summarize, keep=keep)


def _compared(
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    payloads: Mapping[str, Payload],
    pairing: KeyPairing,
) -> ComparedRuns:
    """The comparison from what is kept of each run, as counted_comparison makes it from what it counts."""
    among = pairing.paired > 0
    summaries = tuple(
        summarize(run, grader, kinds_from_json(payloads[run.name]["kinds"]), {}, among)
        for run, grader in zip(records, graders, strict=True)
    )
    coverage = tuple(counted_coverage(run, *payloads[run.name]["coverage"]) for run in records)
    return ComparedRuns(summaries, coverage, pairing)


def _payload(grader: str | None, kinds: list[Kind], coverage: Coverage) -> Payload:
    return {
        "grader": grader,
        "kinds": kinds_to_json(kinds),
        "coverage": [coverage.answered, coverage.graded, coverage.errors],
    }


def _recounted(
    store: Store,
    kind: str,
    kept: Mapping[str, KeptSummary],
    stale: Sequence[tuple[RunRecord, str | None]],
    pairing: KeyPairing,
    *,
    keep: bool,
) -> dict[str, Payload] | None:
    """What is kept of the `stale` runs counted again on the kept common questions, where their samples
    are as they were (their grades changed); None where some run's samples changed."""
    signatures = store.summary_signatures(run.name for run, _ in stale)
    # a signature's first two parts are the run's samples (one a question, then the others)
    if any(signatures[run.name][:2] != kept[run.name].signature[:2] for run, _ in stale):
        return None
    among = pairing.paired > 0
    if among:
        store.keep_questions(pairing.ids)
    recounted = {}
    for run, grader in stale:
        kinds = store.score_kinds(run.name, grader, open_types(), kept=among)
        keys = store.pair_keys(run.name, grader, open_types(), ordered=False)
        if kinds is None or keys is None:
            return None
        payload = _payload(grader, kinds, key_coverage(run, keys))
        if "pairing" in kept[run.name].payload:
            payload["pairing"] = kept[run.name].payload["pairing"]
        recounted[run.name] = payload
    if keep:
        store.keep_summaries(kind, {name: (signatures[name], payload) for name, payload in recounted.items()})
    return recounted


def _counted(
    store: Store,
    kind: str,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    *,
    keep: bool,
) -> ComparedRuns | None:
    """counted_comparison of every run, kept when `keep` (and the store keeps summaries)."""
    keep = keep and store.keeps_summaries()
    # read before counting: what is counted is kept only if these are still the runs' signatures
    signatures = store.summary_signatures(run.name for run in records) if keep else {}
    counted: dict[str, list[Kind]] = {}

    def counting(
        run: RunRecord, grader: str | None, kinds: list[Kind], outcomes: dict[QuestionKey, float], among: bool
    ) -> RunSummary:
        counted[run.name] = kinds
        return summarize(run, grader, kinds, outcomes, among)

    compared = counted_comparison(store, records, graders, counting, outcomes=False)
    if compared is None or not keep or not isinstance(compared.pairing, KeyPairing):
        return compared
    payloads = {
        run.name: _payload(grader, counted[run.name], coverage)
        for run, grader, coverage in zip(records, graders, compared.coverage, strict=True)
    }
    payloads[records[0].name]["pairing"] = pairing_to_json(compared.pairing)
    store.keep_summaries(kind, {name: (signatures[name], payload) for name, payload in payloads.items()})
    return compared
