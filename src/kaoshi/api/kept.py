"""Comparisons taken from what the store keeps of them (kaoshi.store.summaries): `kaoshi leaderboard`, `kaoshi
report A B`, `kaoshi compare A B` and the viewer's leaderboard and compare pages read ten runs of 100,000
samples, or two, without pairing their questions again, for as long as the runs' rows are as they were
when counted.

What is kept is a kind of the store's kept summaries, named by what it is and the runs, in order (a board
of five runs, a report of two: comparison_kind). Per run: the grader folded in, its samples counted kind by
kind on the common questions (score_kinds), its coverage counts and, for a report, its output profile on
them; with the first run, the pairing (the common questions, how many every run graded, the ids holding
different questions) and, for a report, what its paired statistics read of the outcomes (PairedOutcomes:
each run's differences from the first, counted by value) and which questions differ (the viewer's compare
page). The comparison is made from them by the code that makes it from what SQLite counts
(kaoshi.api.counting.counted_comparison), so the numbers are the same: the tests hold both equal, after
each kind of change to a run.

A board's run that changed since is counted again: alone, on the same questions, when only its grades
changed (a judge's: pairing reads no grade); otherwise every run, as counted_comparison counts them. A
report pairs each run with the first question by question: any change counts every run again.

A run's own counts (kept_run: its kinds and output profile, for `kaoshi report RUN`, kaoshi.summarize and
the viewer's run page, with the profile's tally) are kept the same way, one run under its own kind, by the
commands that write the run as they end (kaoshi.api.summary.keep_counts), and beside them its answer rows
(kept_keys, under keys_kind). A comparison pairs those rows, and takes a run's counts less those of the few
questions it leaves out (kaoshi.api.counting), where they are of the rows it paired.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from kaoshi.analysis.outputs import TAIL_CHARS, OutputProfile, OutputTally, counted_profile, counted_tally
from kaoshi.api.counting import (
    Counted,
    CountedSummary,
    counted_comparison,
    open_types,
    read_answers,
    read_keys,
)
from kaoshi.bulk import collection_paused
from kaoshi.results.aggregate import RunSummary
from kaoshi.store import RunRecord, Store
from kaoshi.store.columns import answer_keys_layout
from kaoshi.store.coverage import Coverage, counted_coverage, key_coverage
from kaoshi.store.pairing import KeyPairing, key_pairings
from kaoshi.store.rows import dumps
from kaoshi.store.summaries import (
    KeptSummary,
    Signature,
    keys_from_json,
    keys_to_json,
    kinds_from_json,
    kinds_layout,
    kinds_to_json,
    pairing_from_json,
    pairing_to_json,
)
from kaoshi.version import __version__

# The comparison's own modules are imported where runs are compared: the report of one run (kept_run) reads
# none of them.
if TYPE_CHECKING:
    from kaoshi.report.compare import ComparedRuns

# What is kept, in which form: a kaoshi that keeps it otherwise uses another number (a kind's fields are
# folded in apart: kinds_layout).
_FORMAT = 1
Payload = dict[str, Any]


class Keeping(NamedTuple):
    """What a comparison keeps beyond each run's counts and coverage and the pairing."""

    label: str  # the first word of its kind
    outcomes: bool  # what the paired statistics read of the outcomes (the summaries then hold none)
    outputs: bool  # each run's output profile on the compared questions
    differing: bool  # which questions differ (counted when kept: the viewer's compare page reads them)


# A board ranks its runs and never pairs them question by question.
BOARD = Keeping("board", outcomes=False, outputs=False, differing=False)
# `kaoshi report A B` and the viewer's compare page.
REPORT = Keeping("comparison", outcomes=True, outputs=True, differing=True)
# `kaoshi report RUN`, kaoshi.summarize and the viewer's run page: a run counted on its own, never paired.
RUN = Keeping("run", outcomes=False, outputs=True, differing=False)
# A run's answer rows in question order (kept_keys), kept beside its counts for the comparisons to pair,
# in the form keys_to_json makes (another form: another number).
KEYS = "keys"
_KEYS_FORMAT = 1


def comparison_kind(label: str, records: Sequence[RunRecord]) -> str:
    """The kind a comparison's counts are kept under: what it is, the form of what is kept (a kind's fields
    by position among it), its runs in order (the first's order is the pairing's) and the question types a
    grader scores (whose points a run's counts fold in), and the kaoshi that counted (another may count
    otherwise: an output profile's loop rule, a status it knows)."""
    described = [_FORMAT, __version__, kinds_layout(), open_types(), [run.name for run in records]]
    return f"{label} " + hashlib.sha256(dumps(described).encode()).hexdigest()


def board_kind(records: Sequence[RunRecord]) -> str:
    """The kind a board's counts are kept under."""
    return comparison_kind(BOARD.label, records)


def kept_comparison(
    store: Store,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    *,
    keep: bool = True,
    keeping: Keeping = BOARD,
    differing: bool = False,
) -> ComparedRuns | None:
    """counted_comparison (for a board: without per-question outcomes), from what the store keeps of
    these runs while it is theirs; counted again where it is not, and kept when `keep` and the store can
    be written (kaoshi.store.Store.keep_summaries). `differing`: with which questions differ
    (ComparedRuns.differing). A comparison read from what is kept has summaries without outcomes: its
    `kept_outcomes` hold what the paired statistics read. None as for counted_comparison."""
    if any(run.spec.repeats > 1 for run in records):
        return None
    kind = comparison_kind(keeping.label, records)
    kept = store.kept_summaries(kind, [run.name for run in records])
    first = kept.get(records[0].name) if records else None
    # every run's, with the pairing (and which questions differ, where asked for)
    whole = len(kept) == len(records) and first is not None and "pairing" in first.payload
    if whole and first is not None and ("differing" in first.payload or not differing):
        pairing = pairing_from_json(first.payload["pairing"])
        stale = [
            (run, grader)
            for run, grader in zip(records, graders, strict=True)
            if not (kept[run.name].current and kept[run.name].payload["grader"] == grader)
        ]
        payloads = {name: one.payload for name, one in kept.items()}
        if stale and keeping.outcomes:
            payloads = {}  # each run is paired with the first question by question: all counted again
        elif stale:
            recounted = _recounted(store, kind, kept, stale, pairing, keep=keep)
            payloads = {**payloads, **recounted} if recounted is not None else {}
        if payloads:
            return _compared(records, graders, summarize, payloads, pairing, keeping)
    return _counted(store, kind, records, graders, summarize, keep=keep, keeping=keeping, differing=differing)


def _compared(
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    payloads: Mapping[str, Payload],
    pairing: KeyPairing,
    keeping: Keeping,
) -> ComparedRuns:
    """The comparison from what is kept of each run, as counted_comparison makes it from what it counts."""
    # Late import: the comparison, which the report of one run (kept_run) never reads
    from kaoshi.report.compare import ComparedRuns, PairedOutcomes

    # Late import: which questions differ, which the report of one run never reads
    from kaoshi.report.differences import Differing

    among = pairing.paired > 0
    summaries = tuple(
        summarize(run, grader, _counts(payloads[run.name], among, keeping))
        for run, grader in zip(records, graders, strict=True)
    )
    coverage = tuple(counted_coverage(run, *payloads[run.name]["coverage"]) for run in records)
    first = payloads[records[0].name]
    outcomes = PairedOutcomes.from_json(first["outcomes"]) if keeping.outcomes else None
    differing = Differing.from_json(first["differing"]) if "differing" in first else None
    return ComparedRuns(summaries, coverage, pairing, outcomes, differing)


def _counts(payload: Payload, among: bool, keeping: Keeping) -> Counted:
    """What was counted of a run, as kept (with its output tally, where a run counted whole kept one)."""
    outputs = OutputProfile.from_json(payload["outputs"]) if keeping.outputs else None
    tally = OutputTally.from_json(payload["tally"]) if "tally" in payload else None
    return Counted(kinds_from_json(payload["kinds"]), among, outputs, tally)


def _payload(grader: str | None, counted: Counted, coverage: Coverage) -> Payload:
    payload: Payload = {
        "grader": grader,
        "kinds": kinds_to_json(counted.kinds),
        "coverage": [coverage.answered, coverage.graded, coverage.errors],
    }
    if counted.outputs is not None:
        payload["outputs"] = counted.outputs.to_json()
    return payload


def _recounted(
    store: Store,
    kind: str,
    kept: Mapping[str, KeptSummary],
    stale: Sequence[tuple[RunRecord, str | None]],
    pairing: KeyPairing,
    *,
    keep: bool,
) -> dict[str, Payload] | None:
    """What is kept of a board's `stale` runs counted again on the kept common questions, where their
    samples are as they were (their grades changed); None where some run's samples changed."""
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
        payload = _payload(grader, Counted(kinds, among), key_coverage(run, keys))
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
    keeping: Keeping,
    differing: bool,
) -> ComparedRuns | None:
    """counted_comparison of every run, kept when `keep` (and the store keeps summaries)."""
    keep = keep and store.keeps_summaries()
    # read before counting: what is counted is kept only if these are still the runs' signatures, and what
    # a run's writer kept is taken only if it was counted from these rows (a run resumed meanwhile)
    signatures = store.summary_signatures(run.name for run in records)
    # the runs' rows hold no cycles: never walked by the collector while they are read, paired and counted,
    # and freed at once when done
    with collection_paused():
        # which questions differ is told from the runs' answer rows, read for the counting too (those a
        # run's writer kept, where it kept them: a quarter of the time of reading them)
        differing = differing or (keep and keeping.differing)
        rows = partial(kept_keys, store, signatures)
        read = read_answers if differing else read_keys
        keys: Sequence[Sequence[Any]] | None = read(store, records, graders, rows)
        if keys is None:
            return None  # rows from before the fingerprint column
        counted: dict[str, Counted] = {}

        def counting(run: RunRecord, grader: str | None, found: Counted) -> RunSummary:
            counted[run.name] = found
            return summarize(run, grader, found)

        # paired both ways at once: answered by every run (what is counted), and every sample (what differs)
        answered, every = key_pairings(keys) if differing else (None, None)
        compared = counted_comparison(
            store,
            records,
            graders,
            counting,
            keys,
            outcomes=keeping.outcomes,
            outputs=keeping.outputs,
            pairing=answered,
            counted_whole=partial(_kept_whole, store, signatures),
        )
        if compared is None:
            return None
        if differing:
            # Late import: which questions differ, which the report of one run (kept_run) never reads
            from kaoshi.report.differences import differing_questions

            compared = replace(compared, differing=differing_questions(keys, every))
        if not keep or not isinstance(compared.pairing, KeyPairing):
            return compared
        payloads = {
            run.name: _payload(grader, counted[run.name], coverage)
            for run, grader, coverage in zip(records, graders, compared.coverage, strict=True)
        }
        first = payloads[records[0].name]
        first["pairing"] = pairing_to_json(compared.pairing)
        if keeping.outcomes:
            first["outcomes"] = compared.outcomes.to_json()
        if compared.differing is not None:
            first["differing"] = compared.differing.to_json()
        store.keep_summaries(kind, {name: (signatures[name], payload) for name, payload in payloads.items()})
        return compared


def kept_run(store: Store, record: RunRecord, grader: str | None, *, keep: bool) -> Counted | None:
    """A run of one sample a question counted on its own, as kaoshi.api.summary.read_summary counts it:
    its samples kind by kind with the points `grader` gave (score_kinds) and its output profile, without
    outcomes. Read from what the store keeps of it while its rows are those counted and it was counted
    for `grader`; else counted, and kept when `keep` (the run's writer keeps it as the run ends, so the
    first `kaoshi report RUN` after it reads it), with its answer rows (kept_keys). None where the run has
    rows from before the group and fingerprint columns (read its score rows then)."""
    found = _kept_whole(store, None, record, grader)
    if found is not None:
        if keep and keys_kind(record) not in store.summary_kinds(record.name):
            # counted by a kaoshi that kept no rows, or their write refused then
            _keep_keys(store, record, grader, store.summary_signatures([record.name])[record.name])
        return found
    keep = keep and store.keeps_summaries()
    signatures = store.summary_signatures([record.name]) if keep else {}  # read before counting
    kinds = store.score_kinds(record.name, grader, open_types())
    if kinds is None:
        return None
    output_rows = store.output_counts(record.name, TAIL_CHARS)
    outputs = counted_profile(*output_rows)
    counted = Counted(kinds, False, outputs)
    if keep:
        payload: Payload = {"grader": grader, "kinds": kinds_to_json(kinds), "outputs": outputs.to_json()}
        # what a comparison takes the questions a run left out of its common ones away from (api.counting)
        tally = counted_tally(*output_rows)
        if tally is not None:
            payload["tally"] = tally.to_json()
        signature = signatures[record.name]
        kind = comparison_kind(RUN.label, [record])
        if store.keep_summaries(kind, {record.name: (signature, payload)}, alone=True):
            _keep_keys(store, record, grader, signature)  # (refused too, where that was)
    return counted


def _keep_keys(store: Store, record: RunRecord, grader: str | None, signature: Signature) -> None:
    """Keep the run's answer rows for the comparisons that pair it (kept_keys), as they are now: read
    after `signature`, so that rows written meanwhile make them not kept (keep_summaries). 0.4-0.65 s for
    a run of 100,000 at its end; a comparison then reads them in a quarter of the time SQLite takes."""
    rows = store.answer_keys(record.name, grader, open_types(), ordered=True)
    if rows is not None:
        keys = {"grader": grader, "rows": keys_to_json(rows)}
        store.keep_summaries(keys_kind(record), {record.name: (signature, keys)}, alone=True)


def keys_kind(record: RunRecord) -> str:
    """The kind a run's answer rows are kept under: the query that reads them (a grader's points folded
    into the open questions' scores) and the form they are kept in, by the kaoshi that kept them; a
    kaoshi that reads them otherwise looks up another kind."""
    described = [_KEYS_FORMAT, __version__, answer_keys_layout(open_types()), record.name]
    return f"{KEYS} " + hashlib.sha256(dumps(described).encode()).hexdigest()


def kept_keys(
    store: Store, signatures: Mapping[str, Signature], record: RunRecord, grader: str | None, answers: bool
) -> list[Any] | None:
    """The run's answer rows (`answers`: store.answer_keys) or key rows (store.pair_keys) in question order
    as its writer kept them (kept_run) for `grader`, while its rows are those it kept them from and had
    the signature `signatures` holds for it; None where nothing is."""
    payload = _kept_of_run(store, keys_kind(record), record, grader, signatures)
    return None if payload is None else keys_from_json(payload["rows"], answers=answers)


def _kept_whole(
    store: Store, signatures: Mapping[str, Signature] | None, record: RunRecord, grader: str | None
) -> Counted | None:
    """What is kept of the run counted on its own (kept_run) while its rows are those counted and it was
    counted for `grader` (and, given `signatures`, counted from the rows that had the run's signature
    there); None where nothing is."""
    payload = _kept_of_run(store, comparison_kind(RUN.label, [record]), record, grader, signatures)
    return None if payload is None else _counts(payload, among=False, keeping=RUN)


def _kept_of_run(
    store: Store,
    kind: str,
    record: RunRecord,
    grader: str | None,
    signatures: Mapping[str, Signature] | None,
) -> Payload | None:
    """What is kept of the run under `kind` while its rows are those it was kept from and it was kept for
    `grader` (and, given `signatures`, kept from the rows that had the run's signature there); None where
    nothing is."""
    kept = store.kept_summaries(kind, [record.name]).get(record.name)
    if kept is None or not kept.current or kept.payload["grader"] != grader:
        return None
    if signatures is not None and kept.signature != signatures.get(record.name):
        return None
    payload: Payload = kept.payload
    return payload


def kept_value(
    store: Store,
    kind: str,
    records: Sequence[RunRecord],
    count: Callable[[], Payload],
    *,
    keep: bool,
    usable: Callable[[Payload], bool] = lambda _: True,
) -> Payload:
    """What `count()` makes of the runs (JSON), read from what the store keeps of `kind` while every
    run's rows are those it was counted from and it is `usable`; else counted, and kept when `keep` (with
    the first run: each run keeps its signature). Counted or read, it is the JSON: the caller makes its
    value from it alike."""
    names = [run.name for run in records]
    kept = store.kept_summaries(kind, names)
    current = len(kept) == len(names) and all(one.current for one in kept.values())
    if current and "value" in kept[names[0]].payload and usable(kept[names[0]].payload["value"]):
        value: Payload = kept[names[0]].payload["value"]
        return value
    keep = keep and store.keeps_summaries()
    signatures = store.summary_signatures(names) if keep else {}  # read before counting
    value = json.loads(dumps(count()))  # as it reads when kept
    if keep:
        payloads: dict[str, Payload] = {name: {} for name in names}
        payloads[names[0]] = {"value": value}
        store.keep_summaries(kind, {name: (signatures[name], payload) for name, payload in payloads.items()})
    return value
