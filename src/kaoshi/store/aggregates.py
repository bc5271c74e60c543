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
        said = _Said("tokens_in", "tokens_out", column("tokens_cached"), column("tokens_reasoning"))
        unsaid = f"status != '{_ERROR}' AND tokens_in IS NULL AND tokens_out IS NULL"
        row = _usage_row(db, table, run, said, paid, f"{column('batch_id')} IS NOT NULL", unsaid)
        totals = [total + value for total, value in zip(totals, row, strict=True)]
    return tuple(totals)


def extractor_usage(db: sqlite3.Connection, run: str) -> tuple[int, ...]:
    """What the LLM extractor's calls about the run's answers cost (the ledger's extractor role), as
    run_usage gives a run's: (calls, prompt, completion, cached prompt, reasoning (none kept), calls whose
    server gave no usage, taken (none), then of the calls those a batch answered: calls, prompt,
    completion, cached prompt)."""
    totals = [0] * 11
    for table in ("samples", "repeat_samples"):
        if "extractor_usage" in {name for name, _, _ in missing_columns(db, table)}:
            continue

        def field(name: str) -> str:
            return f"json_extract(extractor_usage, '$.{name}')"

        said = _Said(field("tokens_in"), field("tokens_out"), field("tokens_cached"), "NULL")
        paid = "extractor_usage IS NOT NULL"
        unsaid = f"{field('tokens_in')} IS NULL AND {field('tokens_out')} IS NULL"
        row = _usage_row(db, table, run, said, paid, f"{field('batch_id')} IS NOT NULL", unsaid, counted=paid)
        totals = [total + value for total, value in zip(totals, row, strict=True)]
    return tuple(totals)


@dataclass(frozen=True)
class _Said:
    """Where a row says what a call used: SQL expressions of its prompt, completion, cached prompt and
    reasoning tokens."""

    prompt: str
    completion: str
    cached: str
    reasoning: str


def _usage_row(
    db: sqlite3.Connection,
    table: str,
    run: str,
    said: _Said,
    paid: str,
    batched: str,
    unsaid: str,
    *,
    counted: str = "1",
) -> list[int]:
    """One table's sums of a run's usage, in run_usage's order: the rows `counted` selects; of them the
    `paid` ones' tokens, those with none said (`unsaid`), the others (taken from elsewhere), then the paid
    ones a batch answered (`batched`) and their tokens."""
    batch = f"{paid} AND {batched}"
    tokens = (said.prompt, said.completion, said.cached)
    sums = [f"TOTAL(CASE WHEN {paid} THEN {expression} END)" for expression in (*tokens, said.reasoning)]
    sums += [f"TOTAL({paid} AND {unsaid})", f"TOTAL(NOT ({paid})), TOTAL({batch})"]
    sums += [f"TOTAL(CASE WHEN {batch} THEN {expression} END)" for expression in tokens]
    row = db.execute(
        f"SELECT COUNT(*), {', '.join(sums)} FROM {table} WHERE run = ? AND {counted}", (run,)
    ).fetchone()
    return [int(value or 0) for value in row]
