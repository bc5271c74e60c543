"""The runs page's live numbers: each run's progress, errors, accuracy and points from SQL aggregates.

The page polls every second or two while runs write. A poll that finds the store as it was (its state:
kaoshi.view.state) reads nothing. When kaoshi's writers changed it, a run whose signature
(kaoshi.view.queries) has not changed keeps its numbers; one that only gained rows adds the new rows'
aggregate (rowid > the largest seen); any other change (a replaced answer, a removed or renamed run) is
counted again, over that run alone. So a poll reads the primary keys' indexes and the rows written since
the last one, not every sample. The first poll, and one that can keep nothing, counts every run and reads
the signatures in the same single pass over the index samples_tally (counted_runs).

That trusts the store to change as kaoshi's writers change it: by adding rows (a replaced answer is a new
row). A change they do not make is counted again, every run: the file replaced or written outside SQLite's
-wal (another store copied over it), or a commit that changed no run's signature (rows rewritten in place
by an UPDATE). One such edit committed between two polls together with a live run's new answers is counted
with the next change of the file (a checkpoint: every thousand pages, and when the writer closes).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from dataclasses import dataclass, fields
from typing import Any

from kaoshi.store.coverage import Coverage
from kaoshi.store.records import RunRecord, RunStatus
from kaoshi.store.settings import compact_settings
from kaoshi.view.filters import open_types
from kaoshi.view.queries import Signature, graders, latest_grader, run_signature, signatures
from kaoshi.view.state import StoreState
from kaoshi.view.urls import run_url

# Per run, as kaoshi.results.aggregate.Tally counts the stored samples (errors are no answer; accuracy is
# over the objective answers checked against the gold one).
_COUNTS_SQL = (
    "SELECT COUNT(*), TOTAL(status = 'error'), "
    "TOTAL(status != 'error' AND (correct IS NOT NULL OR score IS NOT NULL)), "
    "TOTAL(status != 'error' AND correct IS NOT NULL), TOTAL(status != 'error' AND correct = 1), "
    "TOTAL(status != 'error' AND score IS NOT NULL), TOTAL(CASE WHEN status != 'error' THEN score END), "
    "TOTAL(CASE WHEN status != 'error' AND score IS NOT NULL THEN points END) "
    "FROM samples WHERE run = ?"
)
# The same over the rows written after a rowid, through the rowids (`+run` keeps SQLite off the run's
# index, which would walk all its rows): a poll reads only what was written since the last.
NEW_COUNTS_SQL = _COUNTS_SQL.replace("WHERE run = ?", "WHERE rowid > ? AND +run = ?")


@dataclass(frozen=True)
class Counts:
    stored: int = 0
    errors: int = 0
    graded: int = 0  # answered and marked right or wrong, or scored (coverage's `graded`)
    checked: int = 0  # objective answers checked against the gold answer: accuracy's denominator
    correct: int = 0
    scored: int = 0
    points: float = 0.0
    max_points: float = 0.0

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> Counts:
        stored, errors, graded, checked, correct, scored, points, max_points = row
        return cls(
            int(stored), int(errors), int(graded), int(checked), int(correct), int(scored), points, max_points
        )

    def plus(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def count_rows(db: sqlite3.Connection, run: str, after_rowid: int = 0) -> Counts:
    """The aggregate of the run's samples, or of those written after `after_rowid`."""
    if after_rowid:
        return Counts.from_row(db.execute(NEW_COUNTS_SQL, (after_rowid, run)).fetchone())
    return Counts.from_row(db.execute(_COUNTS_SQL, (run,)).fetchone())


# Every run's samples grouped as the index samples_tally holds them (run, status, correct, score, points):
# one pass over it in its own order, no sort, a few groups a run, each with its rows' count and largest
# rowid (the run's signature). Evaluating _COUNTS_SQL's sums on each row took twice as long.
_GROUPED_SQL = (
    "SELECT run, status, correct, score, points, COUNT(*), MAX(rowid) FROM samples "
    "GROUP BY run, status, correct, score, points"
)


def counted_runs(db: sqlite3.Connection) -> dict[str, tuple[Signature, Counts]]:
    """Every run's signature (kaoshi.view.queries) and the aggregate of its samples (count_rows), read in
    one pass over every sample: the runs page's first poll, where nothing counted before can be kept."""
    found: dict[str, tuple[int, int, list[float]]] = {}
    for run, status, correct, score, points, rows, largest in db.execute(_GROUPED_SQL):
        stored, top, sums = found.get(run, (0, 0, [0.0] * 7))
        if status == "error":
            sums[0] += rows
        else:
            sums[1] += rows if correct is not None or score is not None else 0
            sums[2] += rows if correct is not None else 0
            sums[3] += rows if correct == 1 else 0
            if score is not None:
                sums[4] += rows
                sums[5] += score * rows
                sums[6] += points * rows
        found[run] = (stored + rows, max(top, largest), sums)
    grades = {
        run: (rows, largest)
        for run, rows, largest in db.execute("SELECT run, COUNT(*), MAX(rowid) FROM grades GROUP BY run")
    }
    counted = {
        run: ((stored, top, *grades.get(run, (0, 0))), Counts.from_row((stored, *sums)))
        for run, (stored, top, sums) in found.items()
    }
    for run, (rows, largest) in grades.items():  # graded, with no sample (left by hand): as signatures()
        counted.setdefault(run, ((0, 0, rows, largest), Counts()))
    return counted


def judged_counts(db: sqlite3.Connection, run: str, grader: str) -> Counts:
    """What the grader's points change in the run's counts: open answers it scored count with its points
    instead of their stored score (kaoshi.results.grading.apply_grades). The counts are differences."""
    kinds = ", ".join("?" for _ in open_types())
    row = db.execute(
        "SELECT COUNT(*), TOTAL(s.correct IS NULL AND s.score IS NULL), TOTAL(s.score IS NOT NULL), "
        "TOTAL(g.points) - TOTAL(s.score), "
        "TOTAL(s.points) - TOTAL(CASE WHEN s.score IS NOT NULL THEN s.points END) "
        "FROM grades g JOIN samples s ON s.run = g.run AND s.question_id = g.question_id "
        "WHERE g.run = ? AND g.grader = ? AND g.points IS NOT NULL AND s.status != 'error' "
        f"AND s.qtype IN ({kinds})",
        (run, grader, *open_types()),
    ).fetchone()
    judged, newly_graded, had_score, points, max_points = row
    return Counts(
        graded=int(newly_graded), scored=int(judged) - int(had_score), points=points, max_points=max_points
    )


@dataclass(frozen=True)
class LiveRun:
    """A run as the runs page shows it."""

    record: RunRecord
    counts: Counts  # with the most recent grader's points of open answers folded in
    grader: str | None

    @property
    def coverage(self) -> Coverage:
        spec = self.record.spec
        asked = spec.asked_questions
        counts = self.counts
        running = self.record.status != RunStatus.FINISHED
        return Coverage(
            self.record.name, asked, counts.stored - counts.errors, counts.graded, counts.errors, running
        )

    @property
    def accuracy(self) -> float | None:
        return self.counts.correct / self.counts.checked if self.counts.checked else None

    def to_json(self) -> dict[str, Any]:
        record, counts, coverage = self.record, self.counts, self.coverage
        spec = record.spec
        accuracy = self.accuracy
        return {
            "run": record.name,
            "href": run_url(record.name),
            "benchmark": spec.benchmark,
            "model": spec.model,
            "method": str(spec.method),
            "settings": compact_settings(spec),
            "created": dt.datetime.fromtimestamp(record.created_at).isoformat(sep=" ", timespec="seconds"),
            "status": str(record.status),
            "holder": record.holder or "",
            "questions": coverage.questions,
            "answered": coverage.answered,
            "errors": coverage.errors,
            "missing": coverage.missing,
            "done": coverage.short,
            "progress": min(counts.stored, coverage.questions),
            "accuracy": accuracy,
            "accuracy_text": "—" if accuracy is None else f"{100 * accuracy:.1f}%",
            "correct": counts.correct,
            "checked": counts.checked,
            "points": f"{counts.points:g}/{counts.max_points:g}" if counts.max_points else "—",
            "grader": self.grader or "",
        }


@dataclass(frozen=True)
class _Kept:
    signature: Signature
    counts: Counts  # the stored samples' own
    judged: Counts  # the grader's difference
    grader: str | None

    def live(self, record: RunRecord) -> LiveRun:
        return LiveRun(record, self.counts.plus(self.judged), self.grader)


@dataclass(frozen=True)
class _Poll:
    """The last poll of every run: the store's state then, each run's signature and what it counted."""

    state: StoreState
    signatures: dict[str, Signature]
    kept: dict[str, _Kept]


def _kaoshis_writes(last: _Poll, state: StoreState, current: dict[str, Signature]) -> bool:
    """Whether the store changed since the last poll as kaoshi's writers change it, so that a run whose
    signature is unchanged is unchanged: commits into the -wal (the file is the same) that added rows to
    some run. Anything else (another file, one written outside SQLite, a commit that added no row: an UPDATE
    in place) is counted again, every run."""
    return last.state.file == state.file and last.signatures != current


class LiveTallies:
    """The runs' counts, kept between polls (one per viewer; polls from several pages wait their turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: _Poll | None = None

    def read(self, db: sqlite3.Connection, records: list[RunRecord], state: StoreState) -> list[LiveRun]:
        """The runs' live numbers; `state`: the store's, read before `db` was opened."""
        with self._lock:
            last = self._last
            if last is not None and last.state == state:  # nothing written since: nothing to read
                kept = {r.name: last.kept.get(r.name) or self._counted(db, r.name) for r in records}
            else:
                before: dict[str, _Kept] = {}
                counted: dict[str, tuple[Signature, Counts]] = {}
                if last is not None and last.state.file == state.file:
                    current = signatures(db)
                    before = last.kept if _kaoshis_writes(last, state, current) else {}
                if not before:  # nothing to keep: every run counted in one pass, signatures with it
                    counted = counted_runs(db)
                    current = {run: signature for run, (signature, _) in counted.items()}
                chosen = graders(db) if any(s[2] for s in current.values()) else {}
                kept = {
                    r.name: self._update(
                        db,
                        r.name,
                        current.get(r.name, (0, 0, 0, 0)),
                        chosen.get(r.name),
                        before.get(r.name),
                        counted[r.name][1] if r.name in counted else None,
                    )
                    for r in records
                }
                self._last = _Poll(state, current, kept)
            return [kept[r.name].live(r) for r in records]

    def one(self, db: sqlite3.Connection, record: RunRecord, state: StoreState) -> LiveRun:
        """One run's live numbers (its page): the last poll's while the store is unchanged, else counted."""
        with self._lock:
            last = self._last
            found = last.kept.get(record.name) if last is not None and last.state == state else None
        return (found or self._counted(db, record.name)).live(record)

    def _counted(self, db: sqlite3.Connection, run: str) -> _Kept:
        return self._update(db, run, run_signature(db, run), latest_grader(db, run), None)

    def _update(
        self,
        db: sqlite3.Connection,
        run: str,
        signature: Signature,
        grader: str | None,
        before: _Kept | None,
        counted: Counts | None = None,
    ) -> _Kept:
        """The run's numbers: kept from the last poll while its signature and grader are the same, else its
        samples' aggregate (`counted` when read already) with its grader's difference."""
        if before is not None and before.signature == signature and before.grader == grader:
            return before
        counts = counted if counted is not None else self._samples(db, run, signature, before)
        # the grades join the run's samples: counted again (over the grades alone) on any change
        judged = judged_counts(db, run, grader) if grader is not None else Counts()
        return _Kept(signature, counts, judged, grader)

    @staticmethod
    def _samples(db: sqlite3.Connection, run: str, signature: Signature, before: _Kept | None) -> Counts:
        if before is None:
            return count_rows(db, run)
        (had, largest), (has, now_largest) = before.signature[:2], signature[:2]
        if (had, largest) == (has, now_largest):
            return before.counts
        if has > had and largest:
            added = count_rows(db, run, largest)
            if added.stored == has - had:  # only new questions: no earlier answer was replaced
                return before.counts.plus(added)
        return count_rows(db, run)
