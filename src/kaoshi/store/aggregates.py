"""Numbers of a run counted by SQLite itself, without reading its samples into Python (kaoshi runs).

Each count is the one kaoshi.store.coverage.run_coverage and kaoshi.results.aggregate.Tally make from the
samples, written as SQL: a test holds the two equal on the golden store and on hand-made rows."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kaoshi.store.records import SampleStatus
from kaoshi.store.schema import missing_columns

_ERROR = SampleStatus.ERROR.value
# Per run: stored samples, errors, answered and graded (run_coverage), objective answers checked and
# correct (Tally.checked / correct, over the samples as stored: no judge grades folded in).
_COUNTS = f"""
SELECT run,
       COUNT(*),
       SUM(status = '{_ERROR}'),
       SUM(status != '{_ERROR}' AND (correct IS NOT NULL OR score IS NOT NULL)),
       SUM(status != '{_ERROR}' AND correct IS NOT NULL),
       SUM(status != '{_ERROR}' AND correct = 1)
FROM {{table}} {{where}} GROUP BY run
"""


@dataclass(frozen=True)
class RunCounts:
    """What `kaoshi runs` shows of a run's samples: `firsts` over each question's first sample (coverage),
    `checked` and `correct` over every sample (a run of k samples a question: avg@k)."""

    samples: int = 0
    errors: int = 0
    graded: int = 0
    checked: int = 0
    correct: int = 0

    @property
    def answered(self) -> int:
        return self.samples - self.errors

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.checked if self.checked else None


def run_counts(db: sqlite3.Connection, run: str | None = None) -> dict[str, tuple[RunCounts, RunCounts]]:
    """Per run (or only `run`): (the counts of its first samples, the counts of its other samples)."""
    where, params = ("WHERE run = ?", (run,)) if run is not None else ("", ())
    found: dict[str, tuple[RunCounts, RunCounts]] = {}
    for index, table in enumerate(("samples", "repeat_samples")):
        for name, *counts in db.execute(_COUNTS.format(table=table, where=where), params):
            pair = list(found.get(name, (RunCounts(), RunCounts())))
            pair[index] = RunCounts(*(int(value or 0) for value in counts))
            found[name] = (pair[0], pair[1])
    return found


def run_usage(db: sqlite3.Connection, run: str) -> tuple[int, ...]:
    """The tokens of the run's samples (every sample of k): (samples, prompt, completion, cached prompt,
    reasoning tokens, answers whose server gave no usage, answers taken from another run or the cache,
    then of the paid answers those a provider's batch gave: answers, prompt, completion, cached prompt),
    as kaoshi.analysis.cost.Usage takes them. An error keeps what its request cost where the server said
    (a reply with no usable answer), and costs nothing where no reply came; an answer taken from elsewhere
    was paid for there, and its tokens are not this run's."""
    totals = [0] * 11
    for table in ("samples", "repeat_samples"):
        lacking = {name for name, _, _ in missing_columns(db, table)}

        def column(name: str, lacking: set[str] = lacking) -> str:
            return "NULL" if name in lacking else name

        paid = f"{column('answered_from')} IS NULL"
        batched = f"{paid} AND {column('batch_id')} IS NOT NULL"
        row = db.execute(
            f"SELECT COUNT(*), TOTAL(CASE WHEN {paid} THEN tokens_in END), "
            f"TOTAL(CASE WHEN {paid} THEN tokens_out END), "
            f"TOTAL(CASE WHEN {paid} THEN {column('tokens_cached')} END), "
            f"TOTAL(CASE WHEN {paid} THEN {column('tokens_reasoning')} END), "
            f"TOTAL({paid} AND status != '{_ERROR}' AND tokens_in IS NULL AND tokens_out IS NULL), "
            f"TOTAL(NOT ({paid})), "
            f"TOTAL({batched}), TOTAL(CASE WHEN {batched} THEN tokens_in END), "
            f"TOTAL(CASE WHEN {batched} THEN tokens_out END), "
            f"TOTAL(CASE WHEN {batched} THEN {column('tokens_cached')} END) "
            f"FROM {table} WHERE run = ?",
            (run,),
        ).fetchone()
        totals = [total + int(value or 0) for total, value in zip(totals, row, strict=True)]
    return tuple(totals)


def extractor_usage(db: sqlite3.Connection, run: str) -> tuple[int, ...]:
    """What the LLM extractor's calls about the run's answers cost (the ledger's extractor role), as
    kaoshi.analysis.cost.Usage takes it: (calls, prompt, completion, cached prompt, reasoning (none kept),
    calls whose server gave no usage, taken (none), then of the calls those a batch answered: calls,
    prompt, completion, cached prompt)."""
    totals = [0] * 11
    for table in ("samples", "repeat_samples"):
        if "extractor_usage" in {name for name, _, _ in missing_columns(db, table)}:
            continue

        def said(field: str) -> str:
            return f"json_extract(extractor_usage, '$.{field}')"

        batched = f"{said('batch_id')} IS NOT NULL"
        row = db.execute(
            f"SELECT COUNT(extractor_usage), TOTAL({said('tokens_in')}), TOTAL({said('tokens_out')}), "
            f"TOTAL({said('tokens_cached')}), 0, "
            f"TOTAL({said('tokens_in')} IS NULL AND {said('tokens_out')} IS NULL), "
            f"0, TOTAL({batched}), TOTAL(CASE WHEN {batched} THEN {said('tokens_in')} END), "
            f"TOTAL(CASE WHEN {batched} THEN {said('tokens_out')} END), "
            f"TOTAL(CASE WHEN {batched} THEN {said('tokens_cached')} END) "
            f"FROM {table} WHERE run = ? AND extractor_usage IS NOT NULL",
            (run,),
        ).fetchone()
        totals = [total + int(value or 0) for total, value in zip(totals, row, strict=True)]
    return tuple(totals)
