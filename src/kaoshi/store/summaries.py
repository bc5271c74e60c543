"""What a command counted of a run, kept in the store (table run_summaries) so that the next read takes it
instead of counting again, for as long as the run's rows are as they were (issue 42: a board of ten runs
of 100,000 samples is read in a fraction of a second where counting it takes seconds). Boards and
comparisons are kept by the commands that read them; a run's own counts by the commands that write it.

A kept summary carries the signature of the rows it was counted from: for the run's samples, its samples
after the first and its grades, how many there are, the largest rowid (an insert gets a larger one than
any before it) and how often they were changed in place (run_versions, counted by triggers on every UPDATE
and DELETE: kaoshi.store.schema.SUMMARY_TRIGGERS; a replaced answer or grade counts as deleted, since the
store writes with recursive_triggers on). Writing new answers fires no trigger. It ends with a digest of
those tables' layout, which a column dropped or added by hand changes. A summary whose signature is no
longer the run's is not used: the reader counts again.

The signature is read before counting, and a summary is kept only if it is still the run's, checked in
the write that keeps it: a run that changed while it was counted keeps nothing. Each kept summary also
holds the store's marker at that moment (each table's largest rowid, the changes in place counted so far):
while the marker is the same, nothing in the store changed and no run's rows need be looked at.

Only a store made or opened for writing by a kaoshi with the triggers keeps summaries; one from before
reads as it always did.

What is kept is JSON in the forms made here: a run's kinds (kinds_to_json), a comparison's pairing
(pairing_to_json) and a run's answer rows (keys_to_json), each under a kind that names its form.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from kaoshi.store.columns import KIND_COLUMNS, Kind, ScoreRow
from kaoshi.store.pairing import AnswerRow, KeyPairing, KeyRow
from kaoshi.store.rows import dumps
from kaoshi.store.schema import SUMMARY_TRIGGERS

# The tables a run's signature covers, in its order.
_TABLES = ("samples", "repeat_samples", "grades")
_MARKER = (
    "SELECT (SELECT IFNULL(MAX(rowid), 0) FROM samples), (SELECT IFNULL(MAX(rowid), 0) FROM repeat_samples), "
    "(SELECT IFNULL(MAX(rowid), 0) FROM grades), (SELECT IFNULL(SUM(version), 0) FROM run_versions)"
)
# The tables' layout as SQLite holds it (their CREATE statements, columns added since included): a column
# dropped or added by hand changes what the rows read as, and fires no trigger. Not SQLite's schema
# version, which a new index, a VACUUM or a backup's copy changes too, and would make every kept summary
# count again for nothing.
_LAYOUT = (
    f"SELECT name, sql FROM main.sqlite_master WHERE type = 'table' AND name IN {tuple(_TABLES)} ORDER BY 1"
)

# A run's signature: per table of _TABLES, [rows, largest rowid, changes in place]; then [a digest of the
# tables' layout].
Signature = list[list[int]]


def _layout(db: sqlite3.Connection) -> int:
    """A digest of the tables' layout (_LAYOUT), as a number of a signature."""
    digest = hashlib.sha256(dumps(db.execute(_LAYOUT).fetchall()).encode()).hexdigest()
    return int(digest[:15], 16)


class KeptSummary(NamedTuple):
    """A run's kept summary of one kind: the signature of the rows it was counted from, what was kept
    (JSON), and whether the run's rows are still those."""

    signature: Signature
    payload: Any
    current: bool


def keeps_summaries(db: sqlite3.Connection) -> bool:
    """Whether the store has the triggers that keep its runs' signatures true (a store from before them
    has no kept summary to trust, and gets none)."""
    made = {row[0] for row in db.execute("SELECT name FROM main.sqlite_master WHERE type = 'trigger'")}
    return made >= set(SUMMARY_TRIGGERS)


def run_signature(db: sqlite3.Connection, run: str) -> Signature:
    """The run's signature now: one pass over each table's index of the run's rows (a run of 100,000
    samples: about 10 ms), and the digest of the tables' layout."""
    signature = []
    for table in _TABLES:
        rows, largest = db.execute(
            f"SELECT COUNT(*), IFNULL(MAX(rowid), 0) FROM {table} WHERE run = ?", (run,)
        ).fetchone()
        found = db.execute(
            "SELECT version FROM run_versions WHERE run = ? AND tbl = ?", (run, table)
        ).fetchone()
        signature.append([int(rows), int(largest), 0 if found is None else int(found[0])])
    signature.append([_layout(db)])
    return signature


def store_marker(db: sqlite3.Connection) -> str:
    """What changes whenever anything in the store's samples or grades does, or their tables' layout, read
    in a few lookups."""
    return dumps([*db.execute(_MARKER).fetchone(), _layout(db)])


def kept_summaries(db: sqlite3.Connection, kind: str, runs: Collection[str]) -> dict[str, KeptSummary]:
    """The kept summaries of `kind` of those of `runs` that have one; none from a store without the
    triggers."""
    if not keeps_summaries(db):
        return {}
    rows = db.execute("SELECT run, signature, marker, payload FROM run_summaries WHERE kind = ?", (kind,))
    found = [row for row in rows if row[0] in runs]
    if not found:
        return {}
    marker = store_marker(db)
    kept = {}
    for run, stored_signature, kept_marker, payload in found:
        signature = json.loads(stored_signature)
        current = kept_marker == marker or signature == run_signature(db, run)
        kept[run] = KeptSummary(signature, json.loads(payload), current)
    return kept


def keep_summaries(
    db: sqlite3.Connection, kind: str, counted: Mapping[str, tuple[Signature, Any]], *, alone: bool = False
) -> bool:
    """Keep each run's summary of `kind` (run -> the signature read before it was counted, what to keep as
    JSON), all in one write transaction and only if every run's signature is still the one read; the run's
    summaries of rows it no longer holds go, and with `alone` its other summaries of the kind's first word
    (a run's own, kept by an older kaoshi under another kind). False when nothing was kept. A busy store
    raises sqlite3.OperationalError, nothing kept."""
    if not counted or not keeps_summaries(db):
        return False
    # made before the write lock is taken (a run's answer rows are megabytes of JSON)
    written = {run: (dumps(signature), dumps(payload)) for run, (signature, payload) in counted.items()}
    label = kind.split(" ", 1)[0] + " "
    db.execute("BEGIN IMMEDIATE")
    try:
        if any(run_signature(db, run) != signature for run, (signature, _) in counted.items()):
            db.execute("ROLLBACK")
            return False  # a run changed while it was counted
        marker = store_marker(db)
        for run, (stored_signature, payload) in written.items():
            db.execute("DELETE FROM run_summaries WHERE run = ? AND signature != ?", (run, stored_signature))
            if alone:
                db.execute(
                    "DELETE FROM run_summaries WHERE run = ? AND kind != ? AND substr(kind, 1, ?) = ?",
                    (run, kind, len(label), label),
                )
            db.execute(
                "INSERT OR REPLACE INTO run_summaries (run, kind, signature, marker, payload) "
                "VALUES (?, ?, ?, ?, ?)",
                (run, kind, stored_signature, marker, payload),
            )
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return True


# -- what a comparison keeps: a run counted kind by kind, its coverage, the pairing -----------------------


def kinds_to_json(kinds: list[Kind]) -> list[list[Any]]:
    """A run's samples counted by kind (kaoshi.store.columns.score_kinds) as JSON: each kind's row as
    score_kinds makes it (its first fields), then how many samples and the first and last place."""
    return [[*kind.row[:_KIND_FIELDS], kind.samples, kind.first, kind.last] for kind in kinds]


def kinds_from_json(value: list[list[Any]]) -> list[Kind]:
    """kinds_to_json read back: the same kinds."""
    return [Kind(ScoreRow(*fields[:_KIND_FIELDS]), *fields[_KIND_FIELDS:]) for fields in value]


# The fields of a kind's row that score_kinds sets (question id .. served model); the others keep their
# defaults.
_KIND_FIELDS = ScoreRow._fields.index("served_model") + 1


def kinds_layout() -> list[list[Any]]:
    """What kinds_to_json's numbers are, by position: the row's fields, a kind's and the columns it is
    counted from. Folded into the kind of what is kept (kaoshi.api.kept.comparison_kind), so that a kaoshi
    whose rows differ looks up other kept summaries and never reads these misaligned."""
    return [list(ScoreRow._fields), list(Kind._fields), list(KIND_COLUMNS)]


def pairing_to_json(pairing: KeyPairing) -> dict[str, Any]:
    return {
        "runs": pairing.runs,
        "ids": list(pairing.ids),
        "graded_by_all": pairing.graded_by_all,
        "conflicts": list(pairing.conflicts),
    }


def pairing_from_json(value: Mapping[str, Any]) -> KeyPairing:
    return KeyPairing(
        int(value["runs"]), tuple(value["ids"]), int(value["graded_by_all"]), tuple(value["conflicts"])
    )


# -- a run's answer rows (kaoshi.store.columns.answer_keys), kept for the comparisons that pair it ---------


def keys_to_json(rows: list[AnswerRow]) -> dict[str, Any]:
    """A run's answer rows in question order as JSON: the ids and fingerprints, and each row's other values
    (status, outcome, score, answer, gold, type) as the place of the distinct ones among them: a run of
    100,000 has a few hundred. Read back (keys_from_json) in a quarter of the time SQLite takes to give the
    rows, which are a Python object a value."""
    distinct: dict[tuple[Any, ...], int] = {}
    codes = [distinct.setdefault(row[2:], len(distinct)) for row in rows]
    return {
        "ids": [row[0] for row in rows],
        "fingerprints": [row[1] for row in rows],
        "values": [list(values) for values in distinct],
        "codes": codes,
    }


def keys_from_json(value: Mapping[str, Any], *, answers: bool) -> list[AnswerRow] | list[KeyRow]:
    """keys_to_json read back: the same rows (with `answers` False, their first five values: key rows,
    kaoshi.store.columns.pair_keys). Each distinct value is one object, shared by the rows holding it."""
    # the values after the id and fingerprint: status, outcome, score (a key row's), answer, gold, type
    width = 6 if answers else 3
    if any(len(values) != 6 for values in value["values"]):
        raise ValueError("kept rows whose values are not six (status, outcome, score, answer, gold, type)")
    ends = [tuple(values[:width]) for values in value["values"]]
    ids, fingerprints, codes = value["ids"], value["fingerprints"], value["codes"]
    if len(codes) != len(ids):
        raise ValueError(f"kept rows of {len(ids)} ids and {len(codes)} codes")
    # each row its id and fingerprint joined to its values' tuple, in C: half the time of a column at a time
    return list(map(tuple.__add__, zip(ids, fingerprints, strict=True), map(ends.__getitem__, codes)))
