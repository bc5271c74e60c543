"""Stored runs side by side on the questions every one answered with the same content: `kaoshi report A
B` and the viewer's compare page. SQLite counts them (kaoshi.api.counting), or they are read from what the
store keeps of an earlier count while the runs' rows are as they were (kaoshi.api.kept); runs of k samples
a question and rows written before the fingerprint and group columns are compared from their score rows
(kaoshi.report.compare.compare_runs). The tests hold every way equal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace

from kaoshi.api.counting import Counted
from kaoshi.api.kept import REPORT, kept_comparison
from kaoshi.api.summary import StoreLike, completed_summary, open_store, read_scores
from kaoshi.report.compare import ComparedRuns, compare_runs
from kaoshi.results.aggregate import GROUP_KEYS, RunSummary, summarize_kinds
from kaoshi.results.grading import chosen_grader
from kaoshi.store import RunRecord
from kaoshi.store.columns import ScoreRow


def compare_stored(
    names: Sequence[str],
    *,
    store: StoreLike = None,
    by: Iterable[str] | None = None,
    grader: str | None = None,
    standard_scores: Mapping[str, float] | None = None,
    shown: Callable[[RunSummary], RunSummary] = lambda summary: summary,
    keep: bool = False,
    differing: bool = False,
) -> ComparedRuns:
    """Stored runs summarised on the questions every one answered with the same content (`kaoshi report A
    B`): each summary as kaoshi.summarize makes it (every grouping unless `by`, standard scores, output
    profile, the benchmark's own numbers) on those questions, then passed through `shown`; `grader` for
    every run (default: each run's most recent judge).

    What was counted is read from the store while the runs are as they were, and `keep`: kept there when
    counted (kaoshi.api.kept). Counted by SQLite or read from what is kept, the summaries hold no
    per-question outcomes: the comparison's `outcomes` hold what its paired statistics read (runs compared
    from their score rows carry theirs). `differing`: with which questions
    differ (ComparedRuns.differing; not for runs compared from their score rows)."""
    grouping = tuple(GROUP_KEYS) if by is None else tuple(by)
    with open_store(store, read_only=True) as opened:
        records = [opened.get_run(name) for name in names]
        graders = [chosen_grader(opened, name, grader) for name in names]

        def summarize(run: RunRecord, chosen: str | None, counted: Counted) -> RunSummary:
            standards = {**run.spec.standard_scores, **(standard_scores or {})}
            summary = summarize_kinds(run.name, counted.kinds, {}, grouping, standards)
            if counted.outputs is None:
                raise AssertionError("a report's comparison is counted with its output profiles")
            # on the questions the runs share: a run's sample estimates the exam in its own report only
            return shown(completed_summary(summary, run, chosen, counted.outputs, estimated=False))

        counted = kept_comparison(
            opened, records, graders, summarize, keep=keep, keeping=REPORT, differing=differing
        )
        if counted is not None:
            return counted
        # from each run's score rows: no prompt, question text or whole output is read
        scored = [read_scores(opened, record.name, grader) for record in records]
    by_name = {one.run.name: one for one in scored}

    def summarize_rows(run: RunRecord, rows: list[ScoreRow]) -> RunSummary:
        summary = by_name[run.name].summarize(grouping, standard_scores, rows)
        return shown(replace(summary, estimate=None, estimate_note=""))  # as counted_comparison's

    return compare_runs([(one.run, list(one.rows)) for one in scored], summarize_rows)
