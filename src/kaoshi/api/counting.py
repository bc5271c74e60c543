"""Runs compared on their common questions with SQLite doing the counting: `kaoshi report A B`, the
leaderboard and the viewer's compare page read their numbers through here, or through what the store
keeps of them (kaoshi.api.kept).

The runs are paired on what pairing reads of each sample (question, content, status, outcome; from the
index samples_scores, kaoshi.store.columns.pair_keys, or as the run's writer kept them: read_keys'
`kept`), the common questions are held in a temporary table, and each run is counted kind by kind on them
(score_kinds, output_counts), or taken as what its writer counted less the few questions it leaves out
(_narrowed), what the paired statistics read of their outcomes taken from the key rows
(kaoshi.report.compare.key_paired_outcomes): the same
ComparedRuns that kaoshi.report.compare.compare_runs makes from every sample's score row, which is still
how runs of k samples a question and rows written before the fingerprint and group columns are read. The
tests hold both ways equal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from kaoshi.analysis.outputs import TAIL_CHARS, OutputProfile, OutputTally, counted_profile, counted_tally
from kaoshi.bulk import collection_paused
from kaoshi.qtypes import QUESTION_KINDS
from kaoshi.results.aggregate import RunSummary
from kaoshi.store import RunRecord, Store
from kaoshi.store.columns import Kind
from kaoshi.store.coverage import key_coverage
from kaoshi.store.pairing import AnswerRow, KeyPairing, KeyRow, pair_key_rows

# Imported where runs are compared: the report of one run reads Counted and open_types alone (through
# kaoshi.api.kept.kept_run).
if TYPE_CHECKING:
    from kaoshi.report.compare import ComparedRuns


class Counted(NamedTuple):
    """What SQLite counted of a run on the compared questions: its samples kind by kind, whether only the
    common questions were counted (False when the runs have none in common and each is counted on its
    own), and its output profile where asked for (and, for a run counted whole, the tally it is made from,
    where kept). No per-question outcomes: a comparison's paired statistics read its runs' outcomes
    together (ComparedRuns.kept_outcomes)."""

    kinds: list[Kind]
    among: bool
    outputs: OutputProfile | None = None
    tally: OutputTally | None = None


# A run's summary (the run, its grader, what was counted of it).
CountedSummary = Callable[[RunRecord, str | None, Counted], RunSummary]
# What is already counted of a run on its own for a grader (what its writer kept), None where nothing is.
WholeRun = Callable[[RunRecord, str | None], Counted | None]


# A run's kinds are made from what its writer kept while at most a tenth of its rows is left out of the
# common questions (7 µs a left-out row read by key, where counting them all is 1 µs a row: a board of ten
# runs leaving out 15% of each counted a tenth slower made so).
_NARROWED_AT_MOST = 10


def open_types() -> list[str]:
    """The question types a grader scores (their points come from the grades, folded in by SQLite)."""
    return sorted(name for name, kind in QUESTION_KINDS.items() if not kind.objective)


def counted_comparison(
    store: Store,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    keys: Sequence[Sequence[KeyRow | AnswerRow]] | None = None,
    *,
    outcomes: bool = True,
    outputs: bool = False,
    pairing: KeyPairing | None = None,
    counted_whole: WholeRun | None = None,
) -> ComparedRuns | None:
    """The runs compared on the questions every run answered with the same content, each summarised by
    `summarize` from its samples counted by SQLite on them; None where a run has k samples a question or
    rows from before the fingerprint and group columns (compare_runs over their score rows then).
    `keys`: the runs' key rows (store.pair_keys, or rows that begin with theirs) when already read.
    `outcomes`: what the paired statistics read of the runs' outcomes (ComparedRuns.kept_outcomes: the
    summaries hold none); False for runs never paired question by question (a sixth of a board).
    `outputs`: each run's output profile counted on the same questions too. `pairing`: the keys paired
    already (pair_key_rows). `counted_whole`: what is already counted of a run on its own (what its writer
    kept), taken for a run whose every question is a common one: counted on them, it is that."""
    if any(run.spec.repeats > 1 for run in records):
        return None
    if keys is None:
        keys = read_keys(store, records, graders)
        if keys is None:
            return None
    # the runs' rows hold no cycles: not walked by the collector again and again while they are counted
    with collection_paused():
        return _counted(
            store,
            records,
            graders,
            summarize,
            keys,
            pairing,
            counted_whole,
            outcomes=outcomes,
            outputs=outputs,
        )


def _counted(
    store: Store,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    summarize: CountedSummary,
    keys: Sequence[Sequence[KeyRow | AnswerRow]],
    pairing: KeyPairing | None,
    counted_whole: WholeRun | None,
    *,
    outcomes: bool,
    outputs: bool,
) -> ComparedRuns | None:
    # Late import: the comparison's module, which the report of one run (kaoshi.api.kept.kept_run) never reads
    from kaoshi.report.compare import ComparedRuns, key_paired_outcomes

    if pairing is None:
        pairing = pair_key_rows(keys)
    kept = pairing.paired > 0  # without common questions each run is summarised on its own
    summaries = []
    held = False  # the common questions, held for SQLite once a run is counted on them
    common: set[str] | None = None
    for run, grader, found in zip(records, graders, keys, strict=True):
        whole = counted_whole(run, grader) if counted_whole else None
        # a run's rows all among the common questions (runs of one exam, each whole): what its writer kept
        # of it is what would be counted here (both SQL passes over its rows were 0.3 s of 100,000)
        if whole is not None and len(found) == pairing.paired and (whole.outputs is not None or not outputs):
            summaries.append(
                summarize(run, grader, Counted(whole.kinds, kept, whole.outputs if outputs else None))
            )
            continue
        kinds, profile = None, None
        if whole is not None and kept:
            common = set(pairing.ids) if common is None else common
            kinds, profile = _narrowed(store, run.name, grader, found, whole, common, outputs=outputs)
        if kept and not held and (kinds is None or (outputs and profile is None)):
            store.keep_questions(pairing.ids)
            held = True
        if kinds is None:
            kinds = store.score_kinds(run.name, grader, open_types(), kept=kept)
        if kinds is None:
            return None
        if outputs and profile is None:
            profile = counted_profile(*store.output_counts(run.name, TAIL_CHARS, kept=kept))
        summaries.append(summarize(run, grader, Counted(kinds, kept, profile)))
    coverage = tuple(key_coverage(run, found) for run, found in zip(records, keys, strict=True))
    # from the key rows already read (reading them again took a sixth of a board)
    paired = key_paired_outcomes([run.name for run in records], pairing, keys) if outcomes else None
    # the comparison holds the pairing, not the rows it was made from (freed once counted)
    return ComparedRuns(tuple(summaries), coverage, replace(pairing, columns=()), paired)


def _narrowed(
    store: Store,
    run: str,
    grader: str | None,
    found: Sequence[KeyRow | AnswerRow],
    whole: Counted,
    common: set[str],
    *,
    outputs: bool,
) -> tuple[list[Kind] | None, OutputProfile | None]:
    """A run with a few of its questions not among the `common` ones (those it or another run erred on),
    counted on them as what its writer kept of it (`whole`) less what those rows count for: its kinds (for
    its own scores: no `grader`) and, where asked for and its tally was kept, its output profile; None for
    what cannot be (count it then). For a run of 100,000 leaving out 4,000: 0.04 s for its kinds and 0.02 s
    for its output profile, where counting them on the common questions took 0.1 s and 0.18 s."""
    if (len(found) - len(common)) * _NARROWED_AT_MOST > len(found):
        return None, None  # at least that many left out (each common question is one of found's)
    left_out = [row[0] for row in found if row[0] not in common]
    kept_of_these = sum(kind.samples for kind in whole.kinds) == len(found)
    if len(left_out) * _NARROWED_AT_MOST > len(found) or not kept_of_these:
        return None, None  # many left out (counted faster), or what was kept is not of these rows
    kinds = store.narrowed_kinds(run, whole.kinds, left_out) if grader is None else None
    if not outputs or whole.tally is None or whole.tally.samples != len(found):
        return kinds, None  # (the tally counts a question's later samples too: a run of one a question)
    less = counted_tally(*store.output_counts(run, TAIL_CHARS, left_out=left_out))
    narrowed = whole.tally.less(less) if less is not None else None
    return kinds, None if narrowed is None else narrowed.profile()


def read_keys(
    store: Store,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    kept: KeptRows | None = None,
) -> list[list[KeyRow]] | None:
    """Each run's key rows (store.pair_keys) in question order, None where a run has rows from before the
    fingerprint column. Pairing keeps the first run's order; the others', read in it too, line up with it
    in the order their rows were made (met in the index's order, pairing took twice as long). `kept`: a
    run's rows as its writer kept them (kaoshi.api.kept.kept_keys), where it kept them."""
    return _read(store.pair_keys, records, graders, kept, answers=False)


def read_answers(
    store: Store,
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    kept: KeptRows | None = None,
) -> list[list[AnswerRow]] | None:
    """read_keys with each row going on with what tells answers apart (store.answer_keys)."""
    return _read(store.answer_keys, records, graders, kept, answers=True)


Row = TypeVar("Row", KeyRow, AnswerRow)
# A run's key rows (answers False) or answer rows (True) as its writer kept them for a grader, None where
# nothing is kept of them.
KeptRows = Callable[[RunRecord, str | None, bool], list[Any] | None]


def _read(
    read: Callable[..., list[Row] | None],
    records: Sequence[RunRecord],
    graders: Sequence[str | None],
    kept: KeptRows | None,
    *,
    answers: bool,
) -> list[list[Row]] | None:
    keys = []
    with collection_paused():  # the runs' rows hold no cycles: not walked again and again as they are made
        for run, grader in zip(records, graders, strict=True):
            found = kept(run, grader, answers) if kept is not None else None
            if found is None:
                found = read(run.name, grader, open_types(), ordered=True)
            if found is None:
                return None
            keys.append(found)
    return keys
