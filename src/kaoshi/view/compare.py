"""The compare page: runs on the same questions (paired by content, kaoshi.store.pairing), kaoshi's paired
statistics (`kaoshi report A B`'s tables: kaoshi.report.compare), and the questions where the runs differ,
their answers side by side."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import compress
from pathlib import Path
from typing import Any, NamedTuple

from kaoshi.api.comparing import compare_stored, open_types
from kaoshi.api.summary import load_scores
from kaoshi.report.compare import compare_to_baseline, comparison_tables
from kaoshi.report.html import outcome
from kaoshi.report.render import coverage_table
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import RunSummary
from kaoshi.runner.judge import chosen_grader
from kaoshi.store import Store
from kaoshi.store.columns import ScoreRow, answer_text
from kaoshi.store.pairing import AnswerRow, pair_key_rows, pair_questions
from kaoshi.view.pages import Viewer
from kaoshi.view.queries import reading, sample_texts

DIFFERENCES_PAGE = 50
STEM_PREVIEW = 160


@dataclass(frozen=True)
class Answer:
    """One run's answer to a question where the runs differ (`response`: read for the page showing it)."""

    answer: str
    outcome: str
    response: str = ""


@dataclass(frozen=True)
class Difference:
    question_id: str
    gold: str
    answers: tuple[Answer, ...]  # in the order of the compared runs
    stem: str = ""  # read for the page showing it


@dataclass(frozen=True)
class ComparedView:
    tables: list[TextTable]
    differences: list[Difference]
    paired: int  # questions every run holds with the same content
    conflicts: tuple[str, ...]


def _answer(row: ScoreRow) -> Answer:
    return Answer(row.answer_text or "", outcome(row))


def differences(runs: Sequence[Sequence[ScoreRow]]) -> tuple[list[Difference], int, tuple[str, ...]]:
    """The questions (same id, same content) where the runs' answers or outcomes differ, in the first run's
    order; with how many questions were paired and the ids left unpaired. From the runs' score rows: the
    stems and responses are read for the page that shows them (`with_texts`). For runs SQLite reads as
    answer rows, key_differences finds the same."""
    pairing = pair_questions(runs, keep=lambda _: True)
    found = []
    for row in pairing.rows:
        # what an answer and its outcome are made of: rows alike in these cannot differ (checked first,
        # so that only the questions that may differ get their answers written out)
        if len({(r.answer, r.status, r.correct, r.score, r.qtype) for r in row}) == 1:
            continue
        answers = tuple(_answer(sample) for sample in row)
        if len({a.answer for a in answers}) > 1 or len({a.outcome for a in answers}) > 1:
            found.append(Difference(row[0].question_id, row[0].gold_text, answers))
    return found, len(pairing.rows), pairing.conflicts


class _Judged(NamedTuple):
    """An answer row's outcome values, as report.html.outcome reads them."""

    status: str
    correct: int | None
    qtype: str
    score: float | None


# what an answer and its outcome are made of, in an answer row (store.pairing.AnswerRow)
_ANSWERED = operator.itemgetter(5, 2, 3, 4, 7)
_ID = operator.itemgetter(0)


def key_differences(runs: Sequence[Sequence[AnswerRow]]) -> tuple[list[Difference], int, tuple[str, ...]]:
    """`differences` over the runs' answer rows (kaoshi.store.columns.answer_keys: the first run's in
    question order): rows alike in what an answer and its outcome are made of are told apart a run's
    column at a time at C speed, and each distinct set of answers is written out once."""
    pairing = pair_key_rows(runs, answered_only=False)
    ids = list(pairing.ids)
    by_id = [dict(zip(map(_ID, rows), rows, strict=True)) for rows in runs]
    columns = [list(map(by.__getitem__, ids)) for by in by_id]
    answered = [list(map(_ANSWERED, column)) for column in columns]
    unlike = [list(map(operator.ne, answered[0], other)) for other in answered[1:]]
    found = []
    written: dict[tuple[Any, ...], tuple[Answer, ...] | None] = {}
    for index in compress(range(len(ids)), map(any, zip(*unlike, strict=True))):
        alike = tuple(column[index] for column in answered)
        if alike not in written:
            answers = tuple(
                Answer(answer_text(answer) or "", outcome(_Judged(status, correct, qtype, score)))
                for answer, status, correct, score, qtype in alike
            )
            differ = len({a.answer for a in answers}) > 1 or len({a.outcome for a in answers}) > 1
            written[alike] = answers if differ else None
        shown = written[alike]
        if shown is not None:
            first = columns[0][index]
            found.append(Difference(first[0], answer_text(first[6]) or "", shown))
    return found, len(ids), pairing.conflicts


def with_texts(path: Path, names: Sequence[str], shown: Sequence[Difference]) -> list[Difference]:
    """The differences with their stems (the first run's) and each run's response (or error)."""
    ids = [d.question_id for d in shown]
    with reading(path) as db:
        texts = [sample_texts(db, name, ids) for name in names]
    filled = []
    for difference in shown:
        qid = difference.question_id
        stem = texts[0].get(qid, ("", ""))[0] if texts else ""
        answers = tuple(
            replace(answer, response=found.get(qid, ("", ""))[1])
            for answer, found in zip(difference.answers, texts, strict=True)
        )
        filled.append(replace(difference, stem=stem[:STEM_PREVIEW], answers=answers))
    return filled


def _answer_rows(store: Store, names: Sequence[str]) -> list[list[AnswerRow]] | None:
    """Each run's answer rows, read once for pairing, counting (kaoshi.api.comparing) and the
    differences; None where a run has rows from before the fingerprint column."""
    rows = []
    for index, name in enumerate(names):
        grader = chosen_grader(store, name, None)
        found = store.answer_keys(name, grader, open_types(), ordered=index == 0)
        if found is None:
            return None
        rows.append(found)
    return rows


def _compared(path: Path, names: Sequence[str]) -> ComparedView:
    with Store(path, read_only=True) as store:
        rows = _answer_rows(store, names)
        # counted by SQLite on the common questions, as `kaoshi report A B` is
        compared = compare_stored(names, store=store, shown=RunSummary.without_unused_groups, keys=rows)
    coverage = coverage_table(f"runs — {compared.headline}", compared.coverage, compared.pairing.conflicts)
    summaries = compared.summaries
    tables = comparison_tables(summaries, compare_to_baseline(summaries), answered_by_all=compared.common)
    if rows is not None:
        found, paired, conflicts = key_differences(rows)
    else:  # from the score rows
        found, paired, conflicts = differences([load_scores(name, store=path).rows for name in names])
    return ComparedView([coverage, *tables], found, paired, conflicts)


def compare_page(viewer: Viewer, names: Sequence[str], page: int) -> dict[str, Any]:
    """The chosen runs compared (the first is the baseline); fewer than two: the page to choose them."""
    chosen = list(dict.fromkeys(names))
    state = viewer.state()
    records = viewer.records()
    for name in chosen:
        viewer.record(name)  # NotFound for a run the store does not hold
    context: dict[str, Any] = {"chosen": chosen, "names": [r.name for r in records], "view": None}
    if len(chosen) < 2:
        return context
    view = viewer.memo.get(("compare", tuple(chosen), state), lambda: _compared(viewer.path, chosen))
    pages = max(1, -(-len(view.differences) // DIFFERENCES_PAGE))
    page = min(max(page, 1), pages)
    start = (page - 1) * DIFFERENCES_PAGE
    context.update(
        view=view,
        shown=with_texts(viewer.path, chosen, view.differences[start : start + DIFFERENCES_PAGE]),
        page=page,
        pages=pages,
    )
    return context
