"""The compare page: runs on the same questions (paired by content, kaoshi.store.pairing), kaoshi's paired
statistics (`kaoshi report A B`'s tables: kaoshi.report.compare), and the questions where the runs differ,
their answers side by side."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.api.summary import LoadedRun, load_run
from kaoshi.data.model import format_gold
from kaoshi.report.compare import compare_runs, compare_to_baseline, comparison_tables
from kaoshi.report.html import outcome
from kaoshi.report.render import coverage_table
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import RunSummary
from kaoshi.store import RunRecord, SampleRecord
from kaoshi.store.pairing import pair_questions
from kaoshi.view.pages import Viewer

DIFFERENCES_PAGE = 50
STEM_PREVIEW = 160


@dataclass(frozen=True)
class Answer:
    """One run's answer to a question where the runs differ."""

    answer: str
    outcome: str
    response: str


@dataclass(frozen=True)
class Difference:
    question_id: str
    stem: str
    gold: str
    answers: tuple[Answer, ...]  # in the order of the compared runs


@dataclass(frozen=True)
class ComparedView:
    tables: list[TextTable]
    differences: list[Difference]
    paired: int  # questions every run holds with the same content
    conflicts: tuple[str, ...]


def _answer(sample: SampleRecord) -> Answer:
    shown = "" if sample.answer is None else format_gold(sample.answer)
    return Answer(shown, outcome(sample), sample.response or sample.error or "")


def differences(runs: Sequence[Sequence[SampleRecord]]) -> tuple[list[Difference], int, tuple[str, ...]]:
    """The questions (same id, same content) where the runs' answers or outcomes differ, in the first run's
    order; errors included (an error against an answer is a difference); and how many were paired."""
    pairing = pair_questions(runs, keep=lambda _: True)
    found = []
    for row in pairing.rows:
        answers = tuple(_answer(sample) for sample in row)
        if len({a.answer for a in answers}) > 1 or len({a.outcome for a in answers}) > 1:
            stem = str(row[0].question.get("stem", ""))
            found.append(
                Difference(row[0].question_id, stem[:STEM_PREVIEW], format_gold(row[0].gold), answers)
            )
    return found, len(pairing.rows), pairing.conflicts


def _compared(path: Path, names: Sequence[str]) -> ComparedView:
    loaded: dict[str, LoadedRun] = {name: load_run(name, store=path, light=True) for name in names}

    def summarize_run(record: RunRecord, samples: list[SampleRecord]) -> RunSummary:
        return loaded[record.name].summarize(None, None, samples).without_unused_groups()

    compared = compare_runs([(one.run, list(one.samples)) for one in loaded.values()], summarize_run)
    coverage = coverage_table(f"runs — {compared.headline}", compared.coverage, compared.pairing.conflicts)
    summaries = compared.summaries
    tables = comparison_tables(summaries, compare_to_baseline(summaries), answered_by_all=compared.common)
    found, paired, conflicts = differences([one.samples for one in loaded.values()])
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
        shown=view.differences[start : start + DIFFERENCES_PAGE],
        page=page,
        pages=pages,
    )
    return context
