"""What the runs, run and leaderboard pages show, as the values their templates render. The numbers are
kaoshi's own: a run's summary is `kaoshi report`'s (kaoshi.api.summary.load_run), the leaderboard
`kaoshi leaderboard`'s; the viewer only lays them out."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kaoshi.analysis.cost import PriceList
from kaoshi.api.boards import leaderboard
from kaoshi.api.ledger import run_ledger
from kaoshi.api.summary import read_summary
from kaoshi.benchmarks import english_names
from kaoshi.errors import InputError
from kaoshi.report.leaderboard import leaderboard_table
from kaoshi.report.outputs import LOOP_NOTE, output_phrases
from kaoshi.report.plot import PlotError, draw, natural_grouping, plot_problem, png_bytes
from kaoshi.report.render import run_tables, usage_table
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import RunSummary
from kaoshi.store import RunRecord, Store
from kaoshi.store.settings import describe_settings
from kaoshi.view.live import LiveRun, LiveTallies
from kaoshi.view.memo import Memo
from kaoshi.view.queries import reading
from kaoshi.view.state import StoreState, store_state


class NotFound(InputError):
    """A run or question the store does not hold (the page answers 404)."""


@dataclass
class Viewer:
    """One viewer of one store: its path, and what it keeps between requests."""

    path: Path
    tallies: LiveTallies = field(default_factory=LiveTallies)
    memo: Memo = field(default_factory=Memo)
    prices: PriceList | None = None  # what each run's tokens cost, on its page (kaoshi view --price)

    def state(self) -> StoreState:
        """The store's state now: what the results kept between requests are keyed by, so that any change
        to the store (a run writing, a row rewritten, the file replaced) makes them miss."""
        return store_state(self.path)

    def records(self) -> list[RunRecord]:
        """Every run, oldest first, with its live status (running, held, interrupted, finished)."""
        with Store(self.path, read_only=True) as store:
            return store.runs()

    def record(self, name: str) -> RunRecord:
        with Store(self.path, read_only=True) as store:
            found = store.find_run(name)
        if found is None:
            raise self.unknown(name)
        return found

    def names(self) -> list[str]:
        """Every run's name, oldest first (nothing counted: the compare page's list to choose from)."""
        with Store(self.path, read_only=True) as store:
            return store.run_names()

    def unknown(self, name: str) -> NotFound:
        """The error of a run the store does not hold (a 404)."""
        return NotFound(f"no run named {name!r} in {self.path}")


def live_runs(viewer: Viewer) -> list[LiveRun]:
    state = viewer.state()
    records = viewer.records()
    with reading(viewer.path) as db:
        return viewer.tallies.read(db, records, state)


def runs_page(viewer: Viewer) -> dict[str, Any]:
    return {"runs": [run.to_json() for run in live_runs(viewer)]}


@dataclass(frozen=True)
class RunView:
    """A run's summary as tables, its grader, the summary its bar chart is drawn from, whether it has one
    (with the caption, or why not) and what its outputs look like (the phrases `kaoshi report` prints under
    its tables; none that say nothing)."""

    tables: list[TextTable]
    grader: str | None
    summary: RunSummary
    plot: bool
    plot_note: str
    outputs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class DrawnPlot:
    """A run's figure, and its caption with what was noted while drawing it (the ASCII labels drawn for a
    font without Chinese glyphs, and what they stand for)."""

    png: bytes
    caption: str


def _plot(summary: RunSummary) -> DrawnPlot:
    """The bar chart by the run's natural grouping."""
    key = natural_grouping([summary])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = png_bytes(draw([summary], key, "bar", english_names()))
    notes = "; ".join(dict.fromkeys(str(w.message) for w in caught))
    return DrawnPlot(png, f"accuracy by {key}" + (f" ({notes})" if notes else ""))


def _run_view(path: Path, name: str) -> RunView:
    # numbers only: counted by SQLite, no prompt or text read; shown, never paired: no outcomes
    with Store(path, read_only=True) as store:
        whole = read_summary(store, name, outcomes=False, keep=False)
    summary = whole.without_unused_groups()
    key = natural_grouping([summary])
    # the figure is drawn when the browser asks for it (run_plot): here only whether it can be; the page's
    # script puts the drawn figure's caption in place of this one
    problem = plot_problem([summary], key)
    note = problem or f"accuracy by {key}"
    outputs = output_phrases(whole.outputs) if whole.outputs is not None else []
    return RunView(run_tables(summary), whole.grader, summary, problem is None, note, outputs)


def run_view(viewer: Viewer, name: str, state: StoreState) -> RunView:
    """The run's summary, computed once per state of the store."""
    return viewer.memo.get(("run", name, state), lambda: _run_view(viewer.path, name))


def run_page(viewer: Viewer, name: str) -> dict[str, Any]:
    state = viewer.state()
    record = viewer.record(name)
    with reading(viewer.path) as db:
        live = viewer.tallies.one(db, record, state)
    view = run_view(viewer, name, state)
    return {
        "record": record,
        "live": live.to_json(),
        "settings": describe_settings(record.spec),
        "spec_json": json.dumps(record.spec.to_json(), ensure_ascii=False, indent=2, sort_keys=True),
        "tables": view.tables,
        "grader": view.grader,
        "plot": view.plot,
        "plot_note": view.plot_note,
        "outputs": view.outputs,
        "outputs_note": LOOP_NOTE,
    }


def ledger_page(viewer: Viewer, name: str) -> dict[str, Any]:
    """A run's ledger by role (its model, each judge, the LLM extractor): the tokens each used as their
    servers said, and with the viewer's prices what they cost. A page of its own: summing a run's usage
    reads every row of it, which the run page, read far more often, does not wait on."""
    viewer.record(name)  # a 404 for an unknown run

    def counted() -> list[TextTable]:
        with Store(viewer.path, read_only=True) as store:
            rows = [row for row in run_ledger(store, name, viewer.prices) if row[1].answers]
        return [usage_table(rows)] if rows else []

    tables = viewer.memo.get(("ledger", name, viewer.state()), counted)
    return {"tables": tables, "priced": viewer.prices is not None}


def run_plot(viewer: Viewer, name: str) -> DrawnPlot:
    """The run's figure with its caption, drawn once per state of the store: when the browser asks for
    it, not with the page (drawing, with matplotlib's import, took most of a big run's page)."""
    state = viewer.state()
    viewer.record(name)
    view = run_view(viewer, name, state)
    if not view.plot:
        raise NotFound(f"no plot of run {name!r}: {view.plot_note}")
    try:
        return viewer.memo.get(("plot", name, state), lambda: _plot(view.summary))
    except PlotError as exc:  # one plot_problem does not foresee
        raise NotFound(f"no plot of run {name!r}: {exc}") from None


@dataclass(frozen=True)
class BoardView:
    benchmark: str
    table: TextTable
    warning: str | None


def _boards(path: Path) -> list[BoardView]:
    try:
        # what `kaoshi leaderboard` keeps in the store is read, but the viewer never writes
        boards = leaderboard(store=path, keep=False)
    except InputError:  # no run in the store yet
        return []
    return [BoardView(b.benchmark, leaderboard_table(b), b.compared.pairing.warning()) for b in boards]


def leaderboard_page(viewer: Viewer) -> dict[str, Any]:
    state = viewer.state()
    return {"boards": viewer.memo.get(("leaderboard", state), lambda: _boards(viewer.path))}
