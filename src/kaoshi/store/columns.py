"""What the numbers of a run are made of, read as columns: one small row a sample, with no prompt, no
question text and no model output (kaoshi.results.aggregate tallies these rows; a SampleRecord becomes the
same row through `score_row`, so that a run read either way is counted by the same code).

The rows are SQLite's own tuples, made into ScoreRows without a Python step per value: gold and answer
stay their stored JSON (`gold_text` / `answer_text` give them as text, decoded once per distinct value),
correct and truncated stay 0/1. Every distinct status, gold and answer of a run is checked as it is read,
so a value kaoshi cannot read is a StoreError naming the store, the run and a question that holds it.
Measured at 100,000 samples a run: this read takes about a third of a read that builds each row in Python.

A row holds the question's content fingerprint (store.pairing), written beside each sample since it was
added; for rows written before, it is computed from their questions here, the one slow path."""

from __future__ import annotations

import operator
import sqlite3
from array import array
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any, NamedTuple

from kaoshi.bulk import collection_paused
from kaoshi.data.model import format_gold, gold_from_json, gold_to_json
from kaoshi.store.errors import StoreError, naming_the_file
from kaoshi.store.pairing import AnswerRow, KeyRow, fingerprint_of_content
from kaoshi.store.records import SampleRecord, SampleStatus
from kaoshi.store.rows import dumps, loads, missing_text, stored, stored_json
from kaoshi.store.schema import missing_columns, stored_text


class ScoreRow(NamedTuple):
    """What a summary reads of one sample, as stored.

    gold, answer: the stored JSON of the gold answer and the answer read ('["A", "B"]', 'true', 'null'; as
    text: `gold_text`, `answer_text`). correct: 1 right, 0 wrong, None not checked; truncated: 1 when cut
    off at the token budget. score: for an open answer, the points its grader gave once grades are folded
    in (kaoshi.results.grading.apply_grade_rows; `graded_points` holds them as read). group: the question's
    `group` (GAOKAO-Bench's subject groups), None when it has none."""

    question_id: str
    fingerprint: str
    qtype: str
    subject: str | None
    domain: str | None
    category: str | None
    group: Any
    status: str
    correct: int | None
    score: float | None
    points: float
    truncated: int
    gold: str | None
    answer: str | None
    served_model: str | None
    sample: int = 0
    graded_points: float | None = None  # the chosen grader's points for this question (None: no grade)
    # what the output profile reads (kaoshi.analysis.outputs): how the answer was read, the counts and
    # time, and only for an answer cut off at its budget the ends of its text and reasoning
    extracted_by: str = "rules"
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_reasoning: int | None = None
    latency_s: float | None = None
    response_end: str | None = None
    reasoning_end: str | None = None

    @property
    def gold_text(self) -> str:
        """The gold answer as text ('AB', '正确', the reference; '' when unknown)."""
        return answer_text(self.gold) or ""

    @property
    def answer_text(self) -> str | None:
        """The answer read, as text (None when none was read)."""
        return answer_text(self.answer)


@lru_cache(maxsize=65536)
def answer_text(stored_answer: str | None) -> str | None:
    """A stored gold or answer (JSON) as text: 'AB', '正确'/'错误', the text; None for none."""
    decoded = gold_from_json(loads(stored_answer))
    return None if decoded is None else format_gold(decoded)


def score_row(sample: SampleRecord, text_end: int | None = None) -> ScoreRow:
    """The row of a sample already read whole; `text_end` as for score_rows (None: the whole texts)."""
    ends: tuple[str | None, str | None] = (None, None)
    if sample.truncated:
        ends = (sample.response, sample.reasoning)
        if text_end is not None:
            ends = (_end(sample.response, text_end), _end(sample.reasoning, text_end))
    return ScoreRow(
        sample.question_id,
        fingerprint_of_content(sample.qtype, sample.question, sample.gold),
        sample.qtype,
        sample.subject,
        sample.domain,
        sample.category,
        sample.question.get("group"),
        sample.status,
        None if sample.correct is None else int(sample.correct),
        sample.score,
        sample.points,
        int(sample.truncated),
        dumps(gold_to_json(sample.gold)),
        dumps(gold_to_json(sample.answer)),
        sample.served_model,
        sample.sample,
        None,
        sample.extracted_by,
        sample.tokens_in,
        sample.tokens_out,
        sample.tokens_reasoning,
        sample.latency_s,
        *ends,
    )


def score_key_rows(rows: Iterable[ScoreRow]) -> list[KeyRow]:
    """What pairing reads of score rows: their key rows (store.pairing.KeyRow), as pair_keys reads them."""
    return list(map(_SCORE_KEY, rows))


_SCORE_KEY = operator.itemgetter(
    *map(ScoreRow._fields.index, ("question_id", "fingerprint", "status", "correct", "score"))
)


def _end(text: str | None, chars: int) -> str | None:
    return None if text is None or chars <= 0 else text[-chars:]


# The question's group as its own column stores it (JSON), read as it is: NULL for none ('null'), and for a
# row written before the column a marker, so that its group is read from its question. Groups are decoded
# in Python, a distinct value once, as the question's JSON is (json_extract would read `true` as 1).
_BEFORE_THE_GROUP = "\x00before"  # a parameter: SQL text cannot hold a NUL
_GROUP = (
    "CASE WHEN s.question_group IS NULL THEN ? WHEN s.question_group = 'null' THEN NULL "
    "ELSE s.question_group END"
)


def score_rows(
    db: sqlite3.Connection,
    path: Path,
    run: str,
    grader: str | None = None,
    *,
    repeats: bool = False,
    text_end: int,
) -> list[ScoreRow]:
    """The run's rows in question order (its first samples; `repeats`: its samples after the first, by
    question and sample), each with the points `grader` gave its question (None: no grader). Of an answer
    cut off at its budget, the last `text_end` characters of its text and reasoning are read (0: none); of
    the others, no text."""
    table = "repeat_samples" if repeats else "samples"
    lacking = {name: default for name, _, default in missing_columns(db, table)}

    def column(name: str) -> str:
        return lacking.get(name, f"s.{name}")

    ends = int(text_end)
    cut = column("truncated")
    graded = "NULL"
    if grader is not None:
        graded = "(SELECT points FROM grades g WHERE g.run = s.run AND g.question_id = s.question_id "
        graded += "AND g.grader = ?)"
    if not repeats and not lacking and _has_index(db, SCORES_INDEX):
        indexed = _indexed_score_rows(db, path, run, grader, graded, ends)
        if indexed is not None:
            return indexed
    selected = _score_select(
        column,
        group="?" if "question_group" in lacking else _GROUP,
        sample="s.sample" if repeats else "0",
        graded=graded,
        ends=(
            f"CASE WHEN {cut} THEN {_ending('s.response', ends)} END",
            f"CASE WHEN {cut} THEN {_ending(column('reasoning'), ends)} END",
        ),
    )
    query = (
        f"SELECT {selected} FROM {table} s WHERE s.run = ? "
        f"ORDER BY s.position, {'s.sample' if repeats else 's.rowid'}"
    )
    params = (_BEFORE_THE_GROUP, *((grader,) if grader is not None else ()), run)
    with collection_paused():
        rows = list(map(ScoreRow._make, db.execute(query, params)))
    _check_values(rows, path, table, run)
    return _with_groups_and_fingerprints(db, path, table, run, rows)


def _score_select(
    column: Callable[[str], str], *, group: str, sample: str, graded: str, ends: tuple[str, str]
) -> str:
    """The select list of a ScoreRow, in its fields' order, from the sample `s`: `column` names a column
    (or the default of one the store lacks), the others are the expressions of the fields so named."""
    return (
        f"s.question_id, {column('fingerprint')}, s.qtype, s.subject, s.domain, s.category, {group}, "
        f"s.status, s.correct, s.score, s.points, {column('truncated')}, s.gold, s.answer, "
        f"{column('served_model')}, {sample}, {graded}, s.extracted_by, s.tokens_in, s.tokens_out, "
        f"{column('tokens_reasoning')}, s.latency_s, {ends[0]}, {ends[1]}"
    )


def _indexed_score_rows(
    db: sqlite3.Connection, path: Path, run: str, grader: str | None, graded: str, ends: int
) -> list[ScoreRow] | None:
    """score_rows of a run's first samples from the index samples_scores alone, sorted by SQLite, and the
    ends of the cut-off answers read from their rows: a third less than reading every row. None when some
    rows were written before the group column (their groups are in their questions)."""
    selected = _score_select(
        lambda name: f"s.{name}", group=_GROUP, sample="0", graded=graded, ends=("NULL", "NULL")
    )
    query = (
        f"SELECT {selected} FROM samples s INDEXED BY {SCORES_INDEX} WHERE s.run = ? "
        "ORDER BY s.position, s.rowid"
    )
    params = (_BEFORE_THE_GROUP, *((grader,) if grader is not None else ()), run)
    with collection_paused():
        rows = list(map(ScoreRow._make, db.execute(query, params)))
        if any(row.group == _BEFORE_THE_GROUP or row.fingerprint is None for row in rows):
            return None
        _check_values(rows, path, "samples", run)
        rows = _with_groups_and_fingerprints(db, path, "samples", run, rows)
        if ends > 0 and any(row.truncated for row in rows):
            texts = {
                question_id: (response, reasoning)
                for question_id, response, reasoning in db.execute(
                    f"SELECT question_id, substr(response, -{ends}), substr(reasoning, -{ends}) "
                    f"FROM samples INDEXED BY {SCORES_INDEX} WHERE run = ? AND truncated",
                    (run,),
                )
            }
            rows = [
                row._replace(response_end=texts[row.question_id][0], reasoning_end=texts[row.question_id][1])
                if row.truncated
                else row
                for row in rows
            ]
    return rows


def _check_values(rows: Iterable[ScoreRow], path: Path, table: str, run: str) -> None:
    """Every distinct status, gold and answer of the rows is one kaoshi reads (a StoreError naming a
    question that holds one that is not)."""
    _check_stored(list(rows), _SCORE_ROW_VALUES, path, table, run)


# Where a score row and an answer row (store.pairing.AnswerRow) hold the question id, status, gold, answer.
_SCORE_ROW_VALUES = tuple(map(ScoreRow._fields.index, ("question_id", "status", "gold", "answer")))
_ANSWER_ROW_VALUES = (0, 2, 6, 5)


def _check_stored(
    rows: Sequence[Sequence[Any]], places: Sequence[int], path: Path, table: str, run: str
) -> None:
    """_check_values over rows holding the question id, status, gold and answer as stored at `places`: each
    distinct value checked once, in the order met, named by the first question holding it. The distinct
    values are checked as sets first: only where one is not read is the order met found (at C speed: a
    loop over a run's rows took a twentieth of a report, and finding the order met a tenth of reading the
    rows a report pairs)."""
    status_at, gold_at, answer_at = places[1:]
    statuses = set(map(operator.itemgetter(status_at), rows))
    values = set(map(operator.itemgetter(gold_at), rows)).union(map(operator.itemgetter(answer_at), rows))
    if _readable(statuses, values):
        return
    ids, in_order, golds, answers = (list(map(operator.itemgetter(place), rows)) for place in places)
    # read backwards, each value's first holder is the one written last
    first_with = dict(zip(reversed(in_order), reversed(ids), strict=True))
    for status in dict.fromkeys(in_order):
        where = f"table {table}, run {run!r}, question {first_with[status]!r}"
        stored(SampleStatus, status, path, where, "status")
    # each row's gold, then its answer
    met = list(chain.from_iterable(zip(golds, answers, strict=True)))
    first_at = dict(zip(reversed(met), range(len(met) - 1, -1, -1), strict=True))
    for value in dict.fromkeys(met):
        question_id, name = ids[first_at[value] // 2], ("gold", "answer")[first_at[value] % 2]
        where = f"table {table}, run {run!r}, question {question_id!r}"
        try:
            gold_from_json(stored_json(value, path, where, name))
        except TypeError as exc:
            raise StoreError(f"{path}: {where}: its {name} is not an answer kaoshi reads ({exc})") from None


def _readable(statuses: Iterable[Any], values: Iterable[Any]) -> bool:
    """Whether every status is a SampleStatus and every value a gold or answer as stored JSON."""
    try:
        for status in statuses:
            SampleStatus(status)
        for value in values:
            gold_from_json(loads(value))
    except (ValueError, TypeError, RecursionError):
        return False
    return True


def _with_groups_and_fingerprints(
    db: sqlite3.Connection, path: Path, table: str, run: str, rows: list[ScoreRow]
) -> list[ScoreRow]:
    """The rows with their groups decoded (each distinct stored value once) and, for rows written before
    the group and fingerprint columns, both read from their questions as store.pairing and a whole sample
    read them. Rows without a group or a question to read are kept as they are: most runs have none."""
    old = [row.question_id for row in rows if row.fingerprint is None or row.group == _BEFORE_THE_GROUP]
    if not old and all(row.group is None for row in rows):
        return rows
    questions: dict[str, Any] = {}
    if old:
        lacking = {name for name, _, _ in missing_columns(db, table)}
        missing = (
            "1"
            if lacking & {"fingerprint", "question_group"}
            else "(fingerprint IS NULL OR question_group IS NULL)"
        )
        question = stored_text(db, table, "question")
        query = f"SELECT question_id, {question} FROM {table} WHERE run = ? AND {missing}"
        for question_id, text in db.execute(query, (run,)):
            where = f"table {table}, run {run!r}, question {question_id!r}"
            if text is None:
                raise missing_text(path, where, "question")
            questions[question_id] = stored_json(text, path, where, "question")
    groups: dict[str, Any] = {}
    found = []
    for row in rows:
        if row.group is None and row.fingerprint is not None:
            found.append(row)
            continue
        changes: dict[str, Any] = {}
        if row.group == _BEFORE_THE_GROUP:
            changes["group"] = questions[row.question_id].get("group")
        elif row.group is not None:
            if row.group not in groups:
                where = f"table {table}, run {run!r}, question {row.question_id!r}"
                groups[row.group] = stored_json(row.group, path, where, "question_group")
            changes["group"] = groups[row.group]
        if row.fingerprint is None:
            gold = gold_from_json(loads(row.gold))
            changes["fingerprint"] = fingerprint_of_content(row.qtype, questions[row.question_id], gold)
        found.append(row._replace(**changes))
    return found


# What a summary tallies of a sample, as columns of `samples` (ScoreRow's fields qtype .. served_model; None:
# the score, with grades folded in).
KIND_COLUMNS = (
    "qtype", "subject", "domain", "category", "question_group", "status", "correct", None, "points",
    "truncated", "gold", "answer", "served_model",
)  # fmt: skip
SCORES_INDEX = "samples_scores"  # schema.INDEXES: what these reads are made for


class Kind(NamedTuple):
    """Samples of a run alike in everything a summary tallies: `row` (its question id one of theirs, for
    messages; its fingerprint empty), how many `samples`, and the places of the first and last of them in
    question order (position, then row)."""

    row: ScoreRow
    samples: int
    first: int
    last: int


def _folded_score(grader: str | None, open_types: Collection[str]) -> tuple[str, str, tuple[Any, ...]]:
    """(the score expression, the join, their parameters) for a sample `s` with the points `grader` gave
    an open answer (`open_types`: the question types a grader scores) folded in as
    kaoshi.results.grading.apply_grades does."""
    if grader is None:
        return "s.score", "", ()
    kinds = ", ".join("?" for _ in open_types) or "NULL"
    score = f"CASE WHEN g.points IS NOT NULL AND s.qtype IN ({kinds}) THEN g.points ELSE s.score END"
    join = "LEFT JOIN grades g ON g.run = s.run AND g.question_id = s.question_id AND g.grader = ?"
    return score, join, (*open_types, grader)


# The questions a board compares its runs on (keep_questions), for score_kinds and outcome_keys `kept`.
_KEPT = "temp.kaoshi_kept_questions"
# A run's questions left out of those (narrowed_kinds): a few, where the runs compared are each whole.
_LEFT_OUT = "temp.kaoshi_left_out_questions"


def keep_questions(db: sqlite3.Connection, question_ids: Iterable[str]) -> None:
    """Hold `question_ids` in a temporary table of this connection (a read-only store too), replacing
    those held before."""
    _hold(db, _KEPT, question_ids)


def _hold(db: sqlite3.Connection, table: str, question_ids: Iterable[str]) -> None:
    """Hold `question_ids` in the temporary `table`, replacing those held before."""
    # the ids are the table's own b-tree (WITHOUT ROWID), not an index beside a table of rows: written a
    # fifth faster, and looked up a little faster by each of a run's samples
    db.execute(
        f"CREATE TEMP TABLE IF NOT EXISTS {table.split('.')[1]} (question_id TEXT PRIMARY KEY) WITHOUT ROWID"
    )
    db.execute(f"DELETE FROM {table}")
    ids = list(question_ids)
    try:
        # one JSON array unpacked by SQLite, sorted in Python (each id at the end of the table's b-tree):
        # 0.03 s for 100,000 ids, where a statement an id took 0.35 s
        db.execute(f"INSERT OR IGNORE INTO {table} SELECT value FROM json_each(?)", (dumps(sorted(ids)),))
    except sqlite3.OperationalError:  # an SQLite built without its JSON functions
        db.executemany(f"INSERT OR IGNORE INTO {table} VALUES (?)", zip(sorted(ids)))


def score_kinds(
    db: sqlite3.Connection,
    path: Path,
    run: str,
    grader: str | None,
    open_types: Collection[str],
    *,
    kept: bool = False,
) -> list[Kind] | None:
    """The run's first samples counted by kind, in the order first met, with the points `grader` gave the
    open answers (`open_types`: the question types a grader scores) folded in as
    kaoshi.results.grading.apply_grades does; `kept`: only the questions keep_questions holds. One pass over
    the index samples_scores, with no sort and no row read. None when some rows were written before the
    group column (their groups are in their questions): read the rows then (score_rows)."""
    among = f" AND s.question_id IN (SELECT question_id FROM {_KEPT})" if kept else ""
    indexed = f" INDEXED BY {SCORES_INDEX}" if _has_index(db, SCORES_INDEX) else ""
    found = _kinds(db, path, run, grader, open_types, f"samples s{indexed}", among)
    if found is not None:
        _check_values((kind.row for kind in found), path, "samples", run)
    return found


def _kinds(
    db: sqlite3.Connection,
    path: Path,
    run: str,
    grader: str | None,
    open_types: Collection[str],
    source: str,
    among: str,
) -> list[Kind] | None:
    """score_kinds of the run's rows read from `source` (where its samples are `s`) that `among` (a
    condition on them) picks, unchecked."""
    if any(name in ("question_group", "fingerprint") for name, _, _ in missing_columns(db, "samples")):
        return None
    score, join, folded = _folded_score(grader, open_types)
    params: tuple[Any, ...] = (*folded, run)
    grouped = ", ".join(score if name is None else f"s.{name}" for name in KIND_COLUMNS)
    query = (
        f"SELECT {grouped}, COUNT(*), MIN({_PLACE}), MAX({_PLACE}), MIN(s.question_id), "
        f"MAX(s.fingerprint IS NULL) FROM {source} {join} "
        f"WHERE s.run = ?{among} GROUP BY {', '.join(str(i) for i in range(1, len(KIND_COLUMNS) + 1))}"
    )
    found = []
    groups: dict[str | None, Any] = {}
    with naming_the_file(path):
        for values in db.execute(query, params):
            stored_group = values[4]
            if stored_group is None:  # a row from before the column: its group is in its question
                return None
            if stored_group not in groups:
                where = f"table samples, run {run!r}, question {values[16]!r}"
                groups[stored_group] = stored_json(stored_group, path, where, "question_group")
            qtype, subject, domain, category, _, status, correct, score_value, points, cut = values[:10]
            gold, answer, served_model = values[10:13]
            samples, first, last, some_question, unfingerprinted = values[13:]
            if unfingerprinted:  # a row from before the fingerprint column: read the rows
                return None
            row = ScoreRow(
                some_question, "", qtype, subject, domain, category, groups[stored_group], status, correct,
                score_value, points, cut, gold, answer, served_model,
            )  # fmt: skip
            found.append(Kind(row, samples, first, last))
    found.sort(key=lambda kind: kind.first)
    return found


# A sample's place: its position, then its row (as samples are read in order, kaoshi.store.sqlite).
_PLACE = "s.position * 4294967296 + s.rowid"


def narrowed_kinds(
    db: sqlite3.Connection, path: Path, run: str, whole: Sequence[Kind], left_out: Collection[str]
) -> list[Kind] | None:
    """score_kinds of the run with `kept` (no grader: its own scores), made from its kinds counted whole
    (`whole`, score_kinds without `kept`) less those of its `left_out` questions (the run's questions
    keep_questions does not hold): the same kinds, counts, first and last places and question ids, where
    only the left-out rows are read, and the few rows that take a left-out one's place as a kind's first,
    last or least question id are looked up in the index samples_scores. A comparison of runs that each
    erred on a few questions counts every run on the questions all of them answered: where what each
    run's writer kept of it is whole, that is 2% of a run read, not all of it. None where the left-out rows
    are not among `whole` (a run changed since it was counted), where two stored groups read as the same
    (two kinds to SQLite, one here: written by hand), or where rows date from before the group and
    fingerprint columns."""
    if not _has_index(db, SCORES_INDEX):
        return None
    _hold(db, _LEFT_OUT, left_out)
    # the left-out rows found by key (SQLite would look each of the run's samples up among them instead)
    source = f"{_LEFT_OUT} o CROSS JOIN samples s"
    less = _kinds(db, path, run, None, (), source, " AND s.question_id = o.question_id")
    if less is None:
        return None
    left = {_kind_key(kind.row): kind for kind in less}
    if len(left) != len(less) or len({_kind_key(kind.row) for kind in whole}) != len(whole):
        return None
    found = []
    for kind in whole:
        gone = left.pop(_kind_key(kind.row), None)
        if gone is None:
            found.append(kind)
            continue
        samples = kind.samples - gone.samples
        if samples < 0:
            return None
        if samples == 0:
            continue
        # a left-out row was the kind's first, last or least question id: the next one of those left
        first = kind.first if gone.first != kind.first else _kept_of_kind(db, run, gone, "first")
        last = kind.last if gone.last != kind.last else _kept_of_kind(db, run, gone, "last")
        row = kind.row
        if gone.row.question_id == row.question_id:
            row = row._replace(question_id=_kept_of_kind(db, run, gone, "least"))
        if first is None or last is None or row.question_id is None:
            return None  # none is left, where `whole` counted some (the run changed since)
        found.append(Kind(row, samples, first, last))
    if left:
        return None  # rows of kinds the run did not have when counted whole
    found.sort(key=lambda kind: kind.first)
    return found


def _kind_key(row: ScoreRow) -> tuple[Any, ...]:
    """What tells a kind from the others: its row past the question id and fingerprint (its group as JSON,
    which may be a list or an object)."""
    return (*row[2:6], dumps(row.group), *row[7:15])


# A left-out kind's rows that are kept: the rows of the run alike in every column score_kinds groups by to
# the left-out row that names the kind (found by key), a kind's rows in question order in samples_scores
# (the order of _PLACE while a rowid is below 2**32, four billion rows written).
_OF_KIND = (
    f"FROM samples x JOIN samples s INDEXED BY {SCORES_INDEX} ON s.run = x.run AND "
    + " AND ".join(f"s.{name or 'score'} IS x.{name or 'score'}" for name in KIND_COLUMNS)
    + f" WHERE x.run = ? AND x.question_id = ? AND s.question_id NOT IN (SELECT question_id FROM {_LEFT_OUT})"
)
_KEPT_OF_KIND = {
    "first": f"SELECT {_PLACE} {_OF_KIND} ORDER BY s.position, s.rowid LIMIT 1",
    "last": f"SELECT {_PLACE} {_OF_KIND} ORDER BY s.position DESC, s.rowid DESC LIMIT 1",
    "least": f"SELECT MIN(s.question_id) {_OF_KIND}",
}


def _kept_of_kind(db: sqlite3.Connection, run: str, gone: Kind, which: str) -> Any:
    """The first or last place, or the least question id, of the kept rows of a left-out kind's; None where
    none is kept."""
    found = db.execute(_KEPT_OF_KIND[which], (run, gone.row.question_id)).fetchone()
    return None if found is None else found[0]


def unlike_questions(
    db: sqlite3.Connection, run: str, other: str
) -> list[tuple[str, str | None, str | None]]:
    """The questions both runs hold whose stored question texts may differ: (id, `run`'s question JSON,
    `other`'s), where the two rows name different texts in `texts` or one holds its text itself (rows from
    before schema 2). Two rows naming one text hold the same question; only the others are read."""
    first, second = (stored_text(db, "samples", "question", alias=alias) for alias in ("a", "b"))
    refs = not any(name == "question_ref" for name, _, _ in missing_columns(db, "samples"))
    unlike = "(a.question_ref IS NULL OR b.question_ref IS NULL OR a.question_ref != b.question_ref)"
    query = (
        f"SELECT a.question_id, {first}, {second} FROM samples a JOIN samples b "
        f"ON b.run = ? AND b.question_id = a.question_id WHERE a.run = ?{f' AND {unlike}' if refs else ''}"
    )
    return db.execute(query, (other, run)).fetchall()


def pair_keys(
    db: sqlite3.Connection,
    run: str,
    grader: str | None,
    open_types: Collection[str],
    *,
    ordered: bool = True,
) -> list[KeyRow] | None:
    """The run's first samples as pairing reads them, from the index samples_scores: in question order,
    or with `ordered` False in the index's (pairing follows its first run's order only); None when some
    rows were written before the fingerprint column (read the score rows then)."""
    keys: list[KeyRow] | None = _key_rows(db, run, grader, open_types, ordered, "")
    return keys


def answer_keys(
    db: sqlite3.Connection,
    path: Path,
    run: str,
    grader: str | None,
    open_types: Collection[str],
    *,
    ordered: bool = True,
    among: Sequence[str] | None = None,
) -> list[AnswerRow] | None:
    """pair_keys, each row going on with the answer read and the gold as stored JSON and the question
    type (store.pairing.AnswerRow: what tells two runs' answers apart), each distinct status, gold and
    answer checked as score rows are. `among`: only those questions (a page of them), looked up by key."""
    keys: list[AnswerRow] | None = _key_rows(db, run, grader, open_types, ordered, _ANSWERED_TOO, among)
    if keys is not None:
        _check_stored(keys, _ANSWER_ROW_VALUES, path, "samples", run)
    return keys


def _key_rows(
    db: sqlite3.Connection,
    run: str,
    grader: str | None,
    open_types: Collection[str],
    ordered: bool,
    more: str,
    among: Sequence[str] | None = None,
) -> Any:
    """The key rows of pair_keys with the columns `more` after them (`among`: those questions')."""
    if any(name == "fingerprint" for name, _, _ in missing_columns(db, "samples")):
        return None
    score, join, folded = _folded_score(grader, open_types)
    # a run's rows follow the index; a few questions' are found by key
    indexed = f" INDEXED BY {SCORES_INDEX}" if among is None and _has_index(db, SCORES_INDEX) else ""
    chosen = "" if among is None else f" AND s.question_id IN ({', '.join('?' for _ in among)})"
    query = _key_query(score, join, more, indexed, chosen, ordered)
    with collection_paused():
        keys = db.execute(query, (*folded, run, *(among or ()))).fetchall()
    return None if None in map(_FINGERPRINT, keys) else keys


def _key_query(score: str, join: str, more: str, indexed: str, chosen: str, ordered: bool) -> str:
    return (
        f"SELECT s.question_id, s.fingerprint, s.status, s.correct, {score}{more} FROM samples s{indexed} "
        f"{join} WHERE s.run = ?{chosen}{' ORDER BY s.position, s.rowid' if ordered else ''}"
    )


# What answer_keys reads after a key row.
_ANSWERED_TOO = ", s.answer, s.gold, s.qtype"


def answer_keys_layout(open_types: Collection[str]) -> str:
    """What a run's answer rows are (answer_keys in question order, a grader's points folded in): kept
    answer rows (kaoshi.api.kept.kept_keys) are kept under it, so that rows read otherwise by another
    kaoshi are never taken for them."""
    score, join, _ = _folded_score("a grader", open_types)
    return _key_query(score, join, _ANSWERED_TOO, "", "", ordered=True)


_FINGERPRINT = operator.itemgetter(1)
_KEY = operator.itemgetter(0, 1)
_CORRECT = operator.itemgetter(2)


def outcome_keys(db: sqlite3.Connection, run: str, *, kept: bool = False) -> dict[tuple[str, str], float]:
    """(question id, fingerprint) -> 1.0 / 0.0 for each of the run's checked answers (RunSummary.outcomes),
    from the index samples_scores; `kept`: only the questions keep_questions holds. Only for a store with
    fingerprints (score_kinds)."""
    among = f" AND question_id IN (SELECT question_id FROM {_KEPT})" if kept else ""
    query = (
        "SELECT question_id, fingerprint, correct FROM samples "
        f"WHERE run = ? AND correct IS NOT NULL AND status != 'error'{among}"
    )  # in index order: the outcomes are looked up by key, and a sort by position would read every row
    with collection_paused():
        found = db.execute(query, (run,)).fetchall()
        # made at C speed: a comprehension took a tenth of a report
        return dict(zip(map(_KEY, found), map(float, map(_CORRECT, found)), strict=True))


class OutputRow(NamedTuple):
    """What the output profile reads of a sample (kaoshi.analysis.outputs.output_profile)."""

    status: str
    extracted_by: str
    tokens_in: int | None
    tokens_out: int | None
    tokens_reasoning: int | None
    latency_s: float | None
    truncated: int
    response_end: str | None = None
    reasoning_end: str | None = None


def output_counts(
    db: sqlite3.Connection,
    run: str,
    text_end: int,
    *,
    kept: bool = False,
    left_out: Collection[str] | None = None,
) -> tuple[list[tuple[OutputRow, int]], list[float]]:
    """The run's samples (its k samples a question too) as the output profile counts them
    (kaoshi.analysis.outputs.counted_profile): those alike in status, extraction and token counts counted
    once with their number, each answer cut off at its budget on its own with the last `text_end`
    characters of its text and reasoning; and the latencies of the answers that have one. From the index
    samples_scores (only the cut-off answers' rows are read): a run's 100,000 samples are a few thousand
    kinds. `kept`: only the questions keep_questions holds. `left_out`: only those of its first samples
    (narrowed_kinds), found by key."""
    if kept and left_out is not None:
        raise ValueError("output_counts reads the kept questions or the left-out ones, not both")
    among = f" AND question_id IN (SELECT question_id FROM {_KEPT})" if kept else ""
    tables: tuple[str, ...] = ("samples", "repeat_samples")
    if left_out is not None:
        _hold(db, _LEFT_OUT, left_out)
        among, tables = " AND samples.question_id = o.question_id", ("samples",)
    counted: list[tuple[OutputRow, int]] = []
    times: list[float] = []
    for table in tables:
        # the left-out rows found by key (SQLite would look each of the run's samples up among them)
        source = table if left_out is None else f"{_LEFT_OUT} o CROSS JOIN {table}"
        lacking = {name: default for name, _, default in missing_columns(db, table)}

        def column(name: str, lacking: dict[str, str] = lacking) -> str:
            return lacking.get(name, name)

        # grouped on the counts before the texts: sorted a fifth faster (the profile reads them in any
        # order); each kind's latencies packed as it is counted (read by a statement of their own, a run's
        # samples were looked through again: 0.03 s more a run of 100,000)
        # an answer's latency (an error's is never read: whatever it holds)
        answered_in = f"CASE WHEN status != '{SampleStatus.ERROR.value}' THEN latency_s END"
        alike = (
            f"SELECT status, extracted_by, tokens_in, tokens_out, {column('tokens_reasoning')}, NULL, 0, "
            f"NULL, NULL, COUNT(*), {_PACKED}({answered_in}) FROM {source} "
            f"WHERE run = ? AND NOT {column('truncated')}{among} GROUP BY 3, 4, 5, 1, 2"
        )
        # the cut-off answers found in the index, so that only their rows are read
        scores = table == "samples" and left_out is None and _has_index(db, SCORES_INDEX)
        indexed = f" INDEXED BY {SCORES_INDEX}" if scores else ""
        ends = (
            f"SELECT status, extracted_by, tokens_in, tokens_out, {column('tokens_reasoning')}, NULL, "
            f"1, {_ending('response', text_end)}, {_ending(column('reasoning'), text_end)}, 1, {answered_in} "
            f"FROM {source}{indexed} WHERE run = ? AND {column('truncated')}{among}"
        )
        db.create_aggregate(_PACKED, 1, _PackedNumbers)
        for values in db.execute(alike, (run,)):
            counted.append((OutputRow._make(values[:-2]), values[-2]))
            times += _unpacked(values[-1])
        for values in db.execute(ends, (run,)):
            counted.append((OutputRow._make(values[:-2]), values[-2]))
            if values[-1] is not None:
                times.append(values[-1])
    return counted, times


# The SQL aggregate output_counts registers on the connection it reads (_PackedNumbers).
_PACKED = "kaoshi_packed_numbers"


class _PackedNumbers:
    """A group's numbers (NULLs left out) packed as doubles: read back exactly (_unpacked), to be summed
    exactly with those of the other groups."""

    def __init__(self) -> None:
        self.numbers = array("d")

    def step(self, value: float | None) -> None:
        if value is not None:
            self.numbers.append(value)

    def finalize(self) -> Any:  # bytes (typeshed has an aggregate's value an int)
        return self.numbers.tobytes()


def _unpacked(packed: bytes) -> array[float]:
    numbers = array("d")
    numbers.frombytes(packed)
    return numbers


def _ending(column: str, chars: int) -> str:
    """The last `chars` characters of `column` (none for 0: substr(x, -0) is all of x)."""
    return f"substr({column}, -{int(chars)})" if int(chars) > 0 else "NULL"


def _has_index(db: sqlite3.Connection, name: str) -> bool:
    return (
        db.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)).fetchone()
        is not None
    )
