"""The compare page: runs on the same questions (paired by content, kaoshi.store.pairing), kaoshi's paired
statistics (`kaoshi report A B`'s tables: kaoshi.report.compare), and the questions where the runs differ,
their answers side by side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kaoshi.api.summary import ScoredRun, load_scores
from kaoshi.report.compare import compare_runs, compare_to_baseline, comparison_tables
from kaoshi.report.html import outcome
from kaoshi.report.render import coverage_table
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import RunSummary
from kaoshi.store import RunRecord
from kaoshi.store.columns import ScoreRow
from kaoshi.store.pairing import pair_questions
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
    stems and responses are read for the page that shows them (`with_texts`)."""
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


def _compared(path: Path, names: Sequence[str]) -> ComparedView:
    scored: dict[str, ScoredRun] = {name: load_scores(name, store=path) for name in names}

    def summarize_run(record: RunRecord, rows: list[ScoreRow]) -> RunSummary:
        return scored[record.name].summarize(None, None, rows).without_unused_groups()

    compared = compare_runs([(one.run, list(one.rows)) for one in scored.values()], summarize_run)
    coverage = coverage_table(f"runs — {compared.headline}", compared.coverage, compared.pairing.conflicts)
    summaries = compared.summaries
    tables = comparison_tables(summaries, compare_to_baseline(summaries), answered_by_all=compared.common)
    found, paired, conflicts = differences([one.rows for one in scored.values()])
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
