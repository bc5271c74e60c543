"""The compare page: runs on the same questions (paired by content, kaoshi.store.pairing), kaoshi's paired
statistics (`kaoshi report A B`'s tables: kaoshi.report.compare), and the questions where the runs differ,
their answers side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kaoshi.api.comparing import compare_stored
from kaoshi.api.counting import open_types
from kaoshi.api.summary import load_scores
from kaoshi.report.compare import baseline_comparisons, compared_tables
from kaoshi.report.differences import Answer as Answer
from kaoshi.report.differences import Difference, differences, differences_among
from kaoshi.report.differences import key_differences as key_differences
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import RunSummary
from kaoshi.results.grading import chosen_grader
from kaoshi.store import Store
from kaoshi.view.pages import Viewer
from kaoshi.view.queries import reading, sample_texts

DIFFERENCES_PAGE = 50
STEM_PREVIEW = 160


@dataclass(frozen=True)
class ComparedView:
    tables: list[TextTable]
    differing: tuple[str, ...]  # the questions where the runs differ, in the first run's order
    paired: int  # questions every run holds with the same content
    conflicts: tuple[str, ...]
    graders: tuple[str | None, ...]  # whose grades each run's answers are read with
    # every difference, where they were told apart from the runs' score rows (rows from before the
    # fingerprint column: a page's cannot be read alone); None: a page's are read for it (page_differences)
    found: Mapping[str, Difference] | None = None


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
    with Store(path, read_only=True) as store:
        graders = tuple(chosen_grader(store, name, None) for name in names)
        # counted by SQLite on the common questions as `kaoshi report A B` is, or read from what it kept
        compared = compare_stored(names, store=store, shown=RunSummary.without_unused_groups, differing=True)
    tables = compared_tables(compared, baseline_comparisons(compared.outcomes))
    if compared.differing is not None:
        found = compared.differing
        return ComparedView(tables, found.ids, found.paired, found.conflicts, graders)
    # from the score rows
    every, paired, conflicts = differences([load_scores(name, store=path).rows for name in names])
    ids = tuple(difference.question_id for difference in every)
    return ComparedView(tables, ids, paired, conflicts, graders, {d.question_id: d for d in every})


def page_differences(
    path: Path, names: Sequence[str], view: ComparedView, ids: Sequence[str]
) -> list[Difference]:
    """The differences among `ids` (of view.differing), from those questions' answer rows alone."""
    if view.found is not None:
        return [view.found[question_id] for question_id in ids]
    with Store(path, read_only=True) as store:
        rows = [
            store.answer_keys(name, grader, open_types(), ordered=False, among=ids)
            for name, grader in zip(names, view.graders, strict=True)
        ]
    return differences_among([found or [] for found in rows], ids)


def compare_page(viewer: Viewer, names: Sequence[str], page: int) -> dict[str, Any]:
    """The chosen runs compared (the first is the baseline); fewer than two: the page to choose them."""
    chosen = list(dict.fromkeys(names))
    state = viewer.state()
    # the names alone (every run's record counts its samples: a twentieth of the page at 1,000,000 samples)
    known = viewer.names()
    unknown = [name for name in chosen if name not in known]
    if unknown:
        raise viewer.unknown(unknown[0])
    context: dict[str, Any] = {"chosen": chosen, "names": known, "view": None}
    if len(chosen) < 2:
        return context
    view = viewer.memo.get(("compare", tuple(chosen), state), lambda: _compared(viewer.path, chosen))
    pages = max(1, -(-len(view.differing) // DIFFERENCES_PAGE))
    page = min(max(page, 1), pages)
    start = (page - 1) * DIFFERENCES_PAGE
    shown = page_differences(viewer.path, chosen, view, view.differing[start : start + DIFFERENCES_PAGE])
    context.update(
        view=view,
        shown=with_texts(viewer.path, chosen, shown),
        page=page,
        pages=pages,
    )
    return context
