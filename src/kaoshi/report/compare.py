"""Several runs side by side: one table per grouping with runs as columns, and paired bootstraps.

Runs are compared on the questions every one of them answered with the same content (`pair_questions`),
so an incomplete run neither shrinks nor inflates the others' numbers unseen: each run's coverage is shown
beside the comparison, and the number of questions it rests on is stated.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import compress, repeat
from typing import Any

from kaoshi.analysis.stats import BootstrapResult, Differences, bootstrap_differences, paired_differences
from kaoshi.report.differences import Differing
from kaoshi.report.render import (
    ERROR_RATE,
    compared_on,
    coverage_table,
    metric_rows,
    not_compared,
    percent,
)
from kaoshi.report.tables import TextTable, mark_best, render_tables
from kaoshi.results.aggregate import RunSummary
from kaoshi.store.coverage import Coverage, run_coverage
from kaoshi.store.pairing import AnswerRow, Item, KeyPairing, KeyRow, Pairing, pair_questions, rows_of
from kaoshi.store.records import RunRecord, SampleStatus
from kaoshi.store.settings import describe_settings


@dataclass(frozen=True)
class PairedOutcomes:
    """What the paired statistics read of the runs' per-question outcomes (RunSummary.outcomes): whether
    every run was scored on the same questions, and each run after the first against the first on the
    questions every run graded (None: they share none)."""

    runs: tuple[str, ...]
    same_questions: bool
    differences: tuple[Differences | None, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": list(self.runs),
            "same_questions": self.same_questions,
            "differences": [None if d is None else d.to_json() for d in self.differences],
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> PairedOutcomes:
        return cls(
            tuple(value["runs"]),
            bool(value["same_questions"]),
            tuple(None if d is None else Differences.from_json(d) for d in value["differences"]),
        )


def paired_outcomes(summaries: Sequence[RunSummary]) -> PairedOutcomes:
    """The summaries' outcomes as the paired statistics read them: every run after the first against the
    first, on the questions every run graded (same id and content), in key order."""
    baseline = summaries[0]
    shared = sorted(set(baseline.outcomes).intersection(*(s.outcomes for s in summaries[1:])))
    differences = tuple(
        paired_differences([baseline.outcomes[q] for q in shared], [other.outcomes[q] for q in shared])
        if shared
        else None
        for other in summaries[1:]
    )
    same_questions = len({frozenset(s.outcomes) for s in summaries}) == 1
    return PairedOutcomes(tuple(s.run for s in summaries), same_questions, differences)


def key_paired_outcomes(
    runs: Sequence[str], pairing: KeyPairing, keys: Sequence[Sequence[KeyRow | AnswerRow]]
) -> PairedOutcomes:
    """paired_outcomes of runs SQLite counts (kaoshi.api.counting), from their key rows (`keys`) and the
    questions every run answered with the same content (`pairing`, pair_key_rows): a run's outcomes are
    its checked answers there, or, where the runs have none in common, on all of its own questions. Read a
    run's column at a time, with no dict of outcomes a run (those took a sixth of a report)."""
    if not pairing.paired:
        # no question every run holds: no outcome is every run's, and the runs' outcomes are on the same
        # questions only where no run has one
        scored = any(any(map(_checked, rows)) for rows in keys)
        return PairedOutcomes(tuple(runs), not scored, tuple(None for _ in runs[1:]))
    columns = pairing.columns or rows_of(keys, pairing.ids)
    # the questions are every run's and answered by every run: a run's outcomes are its checked answers
    checked = [list(map(operator.is_not, map(_CORRECT, column), repeat(None))) for column in columns]
    same_questions = all(one == checked[0] for one in checked[1:])
    shared = checked[0]
    for one in checked[1:]:
        shared = list(map(operator.and_, shared, one))
    ids = list(compress(pairing.ids, shared))
    baseline = _outcomes(columns[0], shared)
    differences = tuple(
        _differences(ids, baseline, _outcomes(column, shared)) if ids else None for column in columns[1:]
    )
    return PairedOutcomes(tuple(runs), same_questions, differences)


_CORRECT = operator.itemgetter(3)


def _checked(row: KeyRow | AnswerRow) -> bool:
    return row[3] is not None and row[2] != SampleStatus.ERROR


def _outcomes(column: Sequence[KeyRow | AnswerRow], shared: Sequence[bool]) -> list[float]:
    return list(map(float, map(_CORRECT, compress(column, shared))))


def _differences(ids: Sequence[str], a: list[float], b: list[float]) -> Differences:
    """paired_differences as paired_outcomes counts them, in the order of the question keys: whole
    differences add up exactly in any order, and only where some are not is that order followed."""
    found = paired_differences(a, b)
    if all(value.is_integer() for value in found.values):
        return found
    order = sorted(range(len(ids)), key=ids.__getitem__)
    return paired_differences([a[i] for i in order], [b[i] for i in order])


@dataclass(frozen=True)
class ComparedRuns:
    """Runs summarised on their common questions (each on its own questions when none is common)."""

    summaries: tuple[RunSummary, ...]
    coverage: tuple[Coverage, ...]
    # the common questions with each run's sample, or (counted by SQLite: kaoshi.api.counting) their ids
    pairing: Pairing[Any] | KeyPairing
    # what the paired statistics read of the outcomes, where the summaries were made without theirs (a
    # comparison SQLite counted, or kept in the store: kaoshi.api.counting, kaoshi.api.kept); None: read
    # from the summaries
    kept_outcomes: PairedOutcomes | None = None
    # the questions where the runs' answers differ, where they were asked for (the viewer's compare page)
    differing: Differing | None = None

    @property
    def common(self) -> bool:
        return self.pairing.paired > 0

    @cached_property
    def outcomes(self) -> PairedOutcomes:
        """What the paired statistics read: as kept, or from the summaries' outcomes."""
        return self.kept_outcomes if self.kept_outcomes is not None else paired_outcomes(self.summaries)

    @property
    def headline(self) -> str:
        """`compared on 150 questions graded by all 3 runs`, or why they are not compared."""
        runs = len(self.summaries)
        return compared_on(self.pairing.graded_by_all, runs) if self.common else not_compared(runs)

    def reordered(self, order: Sequence[int]) -> ComparedRuns:
        """The same comparison with the runs in `order` (the first is the baseline)."""
        if self.kept_outcomes is not None or self.differing is not None:
            # what was counted pairs each run with the first: another baseline needs the runs counted again
            raise ValueError("a comparison paired with its first run by SQLite cannot be reordered")
        return replace(
            self,
            summaries=tuple(self.summaries[i] for i in order),
            coverage=tuple(self.coverage[i] for i in order),
        )

    def to_json(self) -> dict[str, object]:
        return {
            "compared_on": {
                "questions": self.pairing.graded_by_all if self.common else 0,
                "runs": len(self.summaries),
                "common": self.common,
            },
            "coverage": [c.to_json() for c in self.coverage],
            "conflicting_ids": list(self.pairing.conflicts),
        }


def compare_runs(
    runs: Sequence[tuple[RunRecord, Sequence[Item]]],
    summarize_run: Callable[[RunRecord, list[Item]], RunSummary],
) -> ComparedRuns:
    """Summarise each run on the questions all the runs answered (same id, same content); errors and
    questions missing from any run are left out of every run's numbers."""
    pairing = pair_questions([samples for _, samples in runs])
    summaries = tuple(
        summarize_run(run, _in_own_order(pairing.samples_of(i), samples) if pairing.rows else list(samples))
        for i, (run, samples) in enumerate(runs)
    )
    coverage = tuple(run_coverage(run, samples) for run, samples in runs)
    return ComparedRuns(summaries, coverage, pairing)


def _in_own_order(paired: list[Item], samples: Sequence[Item]) -> list[Item]:
    """A run's paired samples in the order the run holds them (pairing gives the first run's order): a
    run's summary does not depend on the run it is compared with (a subject's group is its first
    sample's), and SQLite counts each run in its own order (kaoshi.api.counting)."""
    place = {id(sample): index for index, sample in enumerate(samples)}
    return sorted(paired, key=lambda sample: place[id(sample)])


@dataclass(frozen=True)
class Comparison:
    """Run `other` against `baseline` on the questions every compared run graded."""

    baseline: str
    other: str
    result: BootstrapResult | None  # None when the runs share no graded question

    def to_json(self) -> dict[str, object]:
        return {
            "baseline": self.baseline,
            "run": self.other,
            **(self.result.to_json() if self.result else {"n": 0}),
        }


def compare_to_baseline(
    summaries: Sequence[RunSummary], resamples: int = 10_000, seed: int = 0
) -> list[Comparison]:
    """Every run after the first against the first, by paired bootstrap over the questions every run
    graded (same id and content)."""
    return baseline_comparisons(paired_outcomes(summaries), resamples, seed)


def baseline_comparisons(paired: PairedOutcomes, resamples: int = 10_000, seed: int = 0) -> list[Comparison]:
    """compare_to_baseline from what the paired statistics read of the outcomes."""
    baseline = paired.runs[0]
    return [
        Comparison(baseline, other, None if found is None else bootstrap_differences(found, resamples, seed))
        for other, found in zip(paired.runs[1:], paired.differences, strict=True)
    ]


def comparison_tables(
    summaries: Sequence[RunSummary],
    comparisons: Sequence[Comparison],
    answered_by_all: bool = False,
    same_questions: bool | None = None,
) -> list[TextTable]:
    """`answered_by_all`: the summaries cover only questions every run answered, so their error rates
    are 0 by construction and left out (each run's own errors are in its coverage). `same_questions`:
    whether every run was scored on the same questions (None: read from the summaries' outcomes)."""
    runs = [s.run for s in summaries]
    # "best" means best on the same questions: runs scored on different ones get no marks
    if same_questions is None:
        same_questions = len({frozenset(s.outcomes) for s in summaries}) == 1
    tables = [_metrics_table(summaries, without=(ERROR_RATE,) if answered_by_all else ())]
    settings = settings_table(summaries)
    if settings is not None:
        tables.insert(0, settings)
    for key in summaries[0].groups:
        names = sorted({name for s in summaries for name in s.groups.get(key, {})})
        values = [
            [
                None,
                *(s.groups[key][name].accuracy if name in s.groups.get(key, {}) else None for s in summaries),
            ]
            for name in names
        ]
        rows = [[name, *(percent(v) for v in row[1:])] for name, row in zip(names, values, strict=True)]
        tables.append(
            TextTable(
                f"accuracy by {key}",
                (key, *runs),
                rows,
                frozenset(mark_best(values)),
            )
        )
    if any(s.has_subjective for s in summaries):
        tables.append(_parts_table(summaries))
    if not same_questions:
        tables = [_unmarked(t) for t in tables]
    if comparisons:
        tables.append(_bootstrap_table(comparisons))
    return tables


def _unmarked(table: TextTable) -> TextTable:
    if not table.best:
        return table
    note = "no best marked: the runs were scored on different questions"
    return replace(table, best=frozenset(), note="; ".join(n for n in (table.note, note) if n))


def settings_table(summaries: Sequence[RunSummary]) -> TextTable | None:
    """What each run was (split, shots, chat template or not, prompt, budgets), where the specs are known."""
    if all(s.spec is None for s in summaries):
        return None
    rows = [[s.run, "—" if s.spec is None else describe_settings(s.spec)] for s in summaries]
    return TextTable("what each run was", ("run", "settings"), rows, wrap=frozenset({1}))


def _parts_table(summaries: Sequence[RunSummary]) -> TextTable:
    """Share of points earned on objective and subjective questions, runs as columns."""
    names = list(dict.fromkeys(name for s in summaries for name in s.parts))
    values = [[None, *((s.parts[n].points_rate if n in s.parts else None) for s in summaries)] for n in names]
    values.append([None, *(s.overall.points_rate for s in summaries)])
    rows = [
        [label, *(percent(v) for v in row[1:])] for label, row in zip([*names, "all"], values, strict=True)
    ]
    return TextTable(
        "objective vs subjective (% of points available)",
        ("part", *(s.run for s in summaries)),
        rows,
        frozenset(mark_best(values)),
        note="over the scored questions; open answers count once judged (kaoshi judge)",
    )


def _metrics_table(summaries: Sequence[RunSummary], without: Sequence[str] = ()) -> TextTable:
    per_run = [[row for row in metric_rows(s) if row.label not in without] for s in summaries]
    labels = list(dict.fromkeys(row.label for rows in per_run for row in rows))
    lookup = [{row.label: row for row in rows} for rows in per_run]
    text_rows: list[list[str]] = []
    best: set[tuple[int, int]] = set()
    for r, label in enumerate(labels):
        values = [run[label].value if label in run else None for run in lookup]
        higher = next(run[label].higher_is_better for run in lookup if label in run)
        text_rows.append([label, *(run[label].text if label in run else percent(None) for run in lookup)])
        best.update((r, c) for _, c in mark_best([[None, *values]], lower_is_better=not higher))
    return TextTable("overall", ("metric", *(s.run for s in summaries)), text_rows, frozenset(best))


def _bootstrap_table(comparisons: Sequence[Comparison]) -> TextTable:
    rows = []
    for comparison in comparisons:
        result = comparison.result
        if result is None:
            rows.append([comparison.other, "0", "—", "—", "—"])
            continue
        rows.append(
            [
                comparison.other,
                str(result.n),
                f"{100 * result.difference:+.1f}",
                f"{100 * result.low:+.1f} … {100 * result.high:+.1f}",
                _p_text(result),
            ]
        )
    return TextTable(
        f"difference in accuracy vs {comparisons[0].baseline} (paired bootstrap, percentage points)",
        ("run", "paired questions", "Δ accuracy", "95% CI", "p"),
        rows,
        note=f"{comparisons[0].result.resamples if comparisons[0].result else 0} resamples of the shared "
        "graded questions; p: two-sided, no difference",
    )


def _p_text(result: BootstrapResult) -> str:
    floor = 1 / (result.resamples + 1)
    return f"<{2 * floor:.4f}" if result.p_value <= 2 * floor else f"{result.p_value:.4f}"


def render_comparison(compared: ComparedRuns, fmt: str, resamples: int = 10_000) -> str:
    """The runs' coverage, then the side-by-side tables and the bootstraps against the first run."""
    summaries = compared.summaries
    comparisons = baseline_comparisons(compared.outcomes, resamples)
    if fmt == "json":
        document = {
            "runs": [s.to_json() for s in summaries],
            "comparisons": [c.to_json() for c in comparisons],
            **compared.to_json(),
        }
        return json.dumps(document, ensure_ascii=False, indent=2)
    return render_tables(compared_tables(compared, comparisons), fmt)


def compared_tables(compared: ComparedRuns, comparisons: Sequence[Comparison]) -> list[TextTable]:
    """The runs' coverage, then the side-by-side tables and the bootstraps `comparisons`."""
    coverage = coverage_table(f"runs — {compared.headline}", compared.coverage, compared.pairing.conflicts)
    same_questions = compared.outcomes.same_questions
    tables = comparison_tables(
        compared.summaries, comparisons, answered_by_all=compared.common, same_questions=same_questions
    )
    return [coverage, *tables]
