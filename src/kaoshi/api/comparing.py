"""Runs compared on their common questions with SQLite doing the counting: `kaoshi report A B`, the
leaderboard and the viewer's compare page read their numbers through here.

The runs are paired on what pairing reads of each sample (question, content, status, outcome; from the
index samples_scores, kaoshi.store.columns.pair_keys), the common questions are held in a temporary table,
and each run is counted kind by kind on them (score_kinds, outcome_keys, output_counts): the same
ComparedRuns that kaoshi.report.compare.compare_runs makes from every sample's score row, which is still
how runs of k samples a question and rows written before the fingerprint and group columns are read. The
tests hold both ways equal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from kaoshi.analysis.outputs import TAIL_CHARS, counted_profile
from kaoshi.api.summary import StoreLike, completed_summary, open_store, read_scores
from kaoshi.qtypes import QUESTION_KINDS
from kaoshi.report.compare import ComparedRuns, compare_runs
from kaoshi.results.aggregate import GROUP_KEYS, RunSummary, summarize_kinds
from kaoshi.runner.judge import chosen_grader
from kaoshi.store import RunRecord, Store
from kaoshi.store.columns import Kind, ScoreRow
from kaoshi.store.coverage import key_coverage
from kaoshi.store.pairing import AnswerRow, KeyRow, QuestionKey, key_outcomes, pair_key_rows

# A run's summary (run, its grader, its samples counted by kind on the compared questions, their
# outcomes, and whether only those were counted: False when the runs have none in common and each is
# summarised on its own).
CountedSummary = Callable[[RunRecord, str | None, list[Kind], dict[QuestionKey, float], bool], RunSummary]


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
) -> ComparedRuns | None:
    """The runs compared on the questions every run answered with the same content, each summarised by
    `summarize` from its samples counted by SQLite on them; None where a run has k samples a question or
    rows from before the fingerprint and group columns (compare_runs over their score rows then).
    `keys`: the runs' key rows (store.pair_keys, or rows that begin with theirs) when already read.
    `outcomes` False: summaries never paired question by question are given none (a sixth of a board)."""
    if any(run.spec.repeats > 1 for run in records):
        return None
    scored_types = open_types()
    if keys is None:
        keys = read_keys(store, records, graders)
        if keys is None:
            return None
    pairing = pair_key_rows(keys)
    kept = pairing.paired > 0  # without common questions each run is summarised on its own
    if kept:
        store.keep_questions(pairing.ids)
    among = set(pairing.ids) if kept else None
    summaries = []
    for run, grader, found in zip(records, graders, keys, strict=True):
        kinds = store.score_kinds(run.name, grader, scored_types, kept=kept)
        if kinds is None:
            return None
        # the outcomes from the key rows already read (reading them again took a sixth of a board)
        paired = key_outcomes(found, among) if outcomes else {}
        summaries.append(summarize(run, grader, kinds, paired, kept))
    coverage = tuple(key_coverage(run, found) for run, found in zip(records, keys, strict=True))
    return ComparedRuns(tuple(summaries), coverage, pairing)


def read_keys(
    store: Store, records: Sequence[RunRecord], graders: Sequence[str | None]
) -> list[list[KeyRow]] | None:
    """Each run's key rows (store.pair_keys), None where a run has rows from before the fingerprint
    column. Pairing keeps the first run's order: the others are read in the index's, unsorted."""
    keys = []
    for index, (run, grader) in enumerate(zip(records, graders, strict=True)):
        found = store.pair_keys(run.name, grader, open_types(), ordered=index == 0)
        if found is None:
            return None
        keys.append(found)
    return keys


def compare_stored(
    names: Sequence[str],
    *,
    store: StoreLike = None,
    by: Iterable[str] | None = None,
    grader: str | None = None,
    standard_scores: Mapping[str, float] | None = None,
    shown: Callable[[RunSummary], RunSummary] = lambda summary: summary,
    keys: Sequence[Sequence[KeyRow | AnswerRow]] | None = None,
) -> ComparedRuns:
    """Stored runs summarised on the questions every one answered with the same content (`kaoshi report A
    B`): each summary as kaoshi.summarize makes it (every grouping unless `by`, standard scores, output
    profile, the benchmark's own numbers) on those questions, then passed through `shown`; `grader` for
    every run (default: each run's most recent judge); `keys` as for counted_comparison (read with those
    graders)."""
    grouping = tuple(GROUP_KEYS) if by is None else tuple(by)
    with open_store(store, read_only=True) as opened:
        records = [opened.get_run(name) for name in names]
        graders = [chosen_grader(opened, name, grader) for name in names]

        def summarize(
            run: RunRecord,
            chosen: str | None,
            kinds: list[Kind],
            outcomes: dict[QuestionKey, float],
            kept: bool,
        ) -> RunSummary:
            standards = {**run.spec.standard_scores, **(standard_scores or {})}
            summary = summarize_kinds(run.name, kinds, outcomes, grouping, standards)
            outputs = counted_profile(*opened.output_counts(run.name, TAIL_CHARS, kept=kept))
            # on the questions the runs share: a run's sample estimates the exam in its own report only
            return shown(completed_summary(summary, run, chosen, outputs, estimated=False))

        counted = counted_comparison(opened, records, graders, summarize, keys)
        if counted is not None:
            return counted
        # from each run's score rows: no prompt, question text or whole output is read
        scored = [read_scores(opened, record.name, grader) for record in records]
    by_name = {one.run.name: one for one in scored}

    def summarize_rows(run: RunRecord, rows: list[ScoreRow]) -> RunSummary:
        summary = by_name[run.name].summarize(grouping, standard_scores, rows)
        return shown(replace(summary, estimate=None, estimate_note=""))  # as counted_comparison's

    return compare_runs([(one.run, list(one.rows)) for one in scored], summarize_rows)
