"""What the numbers of a run are made of, read as columns: one small row a sample, with no prompt, no
question text and no model output (kaoshi.results.aggregate tallies these rows; a SampleRecord becomes the
same row through `score_row`, so that a run read either way is counted by the same code).

A row holds the question's content fingerprint (store.pairing), written beside each sample since it was
added; for a row written before, it is computed from the question here, which is the one slow path."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from kaoshi.data.model import format_gold, gold_from_json
from kaoshi.store.pairing import fingerprint_of_content
from kaoshi.store.records import SampleRecord, SampleStatus
from kaoshi.store.rows import stored, stored_json
from kaoshi.store.schema import missing_columns


class ScoreRow(NamedTuple):
    """What a summary reads of one sample.

    gold: the gold answer as text (`format_gold`: 'AB', '正确', the reference, '' when unknown); answer:
    the answer read as text, None when none was read. score: for an open answer, the points a grader gave
    when its grades are folded in (`graded_points` holds them as stored; see kaoshi.runner.judge).
    group: the question's `group` (GAOKAO-Bench's subject groups), None when it has none."""

    question_id: str
    fingerprint: str
    qtype: str
    subject: str | None
    domain: str | None
    category: str | None
    group: Any
    status: SampleStatus
    correct: bool | None
    score: float | None
    points: float
    truncated: bool
    gold: str
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


def score_row(sample: SampleRecord, text_end: int | None = None) -> ScoreRow:
    """The row of a sample already read whole; `text_end` as for score_rows (None: the whole texts)."""
    cut = sample.truncated
    ends = (None, None) if not cut else (sample.response, sample.reasoning)
    if text_end is not None:
        ends = tuple(None if text is None else text[-text_end:] for text in ends)  # type: ignore[assignment]
    return ScoreRow(
        sample.question_id,
        fingerprint_of_content(sample.qtype, sample.question, sample.gold),
        sample.qtype,
        sample.subject,
        sample.domain,
        sample.category,
        sample.question.get("group"),
        sample.status,
        sample.correct,
        sample.score,
        sample.points,
        sample.truncated,
        format_gold(sample.gold),
        None if sample.answer is None else format_gold(sample.answer),
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


# The question's group without decoding the question: json_extract only where the key is written (a stored
# question is sort-keyed JSON, so a group is written `"group":`); decoding every question's JSON took about
# as long as reading the rest of the row.
_GROUP = """CASE WHEN instr(s.question, '"group"') THEN json_extract(s.question, '$.group') END"""


def score_rows(
    db: sqlite3.Connection,
    path: Path,
    run: str,
    grader: str | None = None,
    *,
    repeats: bool = False,
    text_end: int,
) -> Iterator[ScoreRow]:
    """The run's rows in question order (its first samples; `repeats`: its samples after the first, by
    question and sample), each with the points `grader` gave its question (None: no grader). Of an answer
    cut off at its budget, the last `text_end` characters of its text and reasoning are read (0: none); of
    the others, no text."""
    table = "repeat_samples" if repeats else "samples"
    have_fingerprints = not any(name == "fingerprint" for name, _, _ in missing_columns(db, table))
    fingerprint = "s.fingerprint" if have_fingerprints else "NULL"
    served = "s.served_model" if _has(db, table, "served_model") else "NULL"
    truncated = "s.truncated" if _has(db, table, "truncated") else "0"
    reasoning = "s.reasoning" if _has(db, table, "reasoning") else "NULL"
    tokens_reasoning = "s.tokens_reasoning" if _has(db, table, "tokens_reasoning") else "NULL"
    sample = "s.sample" if repeats else "0"
    graded = (
        "(SELECT g.points FROM grades g "
        "WHERE g.run = s.run AND g.question_id = s.question_id AND g.grader = ?)"
    )
    query = (
        f"SELECT s.question_id, {fingerprint}, CASE WHEN {fingerprint} IS NULL THEN s.question END, s.qtype, "
        f"s.subject, s.domain, s.category, {_GROUP}, s.status, s.correct, s.score, s.points, {truncated}, "
        f"s.gold, s.answer, {served}, {sample}, {graded if grader is not None else 'NULL'}, s.extracted_by, "
        f"s.tokens_in, s.tokens_out, {tokens_reasoning}, s.latency_s, "
        f"CASE WHEN {truncated} AND {int(text_end)} > 0 THEN substr(s.response, -{int(text_end)}) END, "
        f"CASE WHEN {truncated} AND {int(text_end)} > 0 THEN substr({reasoning}, -{int(text_end)}) END "
        f"FROM {table} s WHERE s.run = ? ORDER BY s.position{', s.sample' if repeats else ''}"
    )
    params: tuple[Any, ...] = (grader, run) if grader is not None else (run,)
    answers: dict[str | None, str | None] = {}  # stored JSON -> text: a run has few distinct answers
    statuses: dict[str, SampleStatus] = {}
    for row in db.execute(query, params):
        (qid, fp, question, qtype, subject, domain, category, group, status, correct, score, points, cut,
         gold, answer, served_model, index, graded_points, *output) = row  # fmt: skip
        where = f"table {table}, run {run!r}, question {qid!r}"
        if status not in statuses:
            statuses[status] = stored(SampleStatus, status, path, where, "status")
        if gold not in answers:
            answers[gold] = _answer_text(gold, path, where, "gold")
        if answer not in answers:
            answers[answer] = _answer_text(answer, path, where, "answer")
        if fp is None:  # written before fingerprints were stored: from the question, as pairing does
            content = stored_json(question, path, where, "question")
            fp = fingerprint_of_content(
                qtype, content, gold_from_json(stored_json(gold, path, where, "gold"))
            )
        yield ScoreRow(
            qid,
            fp,
            qtype,
            subject,
            domain,
            category,
            group,
            statuses[status],
            None if correct is None else bool(correct),
            score,
            points,
            bool(cut),
            answers[gold] or "",
            answers[answer],
            served_model,
            index,
            graded_points,
            *output,
        )


def _answer_text(value: str | None, path: Path, where: str, column: str) -> str | None:
    """A stored gold or answer as text (None: no answer)."""
    decoded = gold_from_json(stored_json(value, path, where, column))
    return None if decoded is None else format_gold(decoded)


def _has(db: sqlite3.Connection, table: str, column: str) -> bool:
    return not any(name == column for name, _, _ in missing_columns(db, table))
