"""Several runs side by side: one table per grouping with runs as columns, and paired bootstraps."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from kaoshi.report.aggregate import RunSummary
from kaoshi.report.render import metric_rows, percent
from kaoshi.report.stats import BootstrapResult, paired_bootstrap
from kaoshi.report.tables import TextTable, mark_best, render_tables


@dataclass(frozen=True)
class Comparison:
    """Run `other` against `baseline` on the questions both graded."""

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
    """Every run after the first against the first, by paired bootstrap over shared graded questions."""
    baseline = summaries[0]
    comparisons = []
    for other in summaries[1:]:
        shared = sorted(set(baseline.outcomes) & set(other.outcomes))
        result = None
        if shared:
            result = paired_bootstrap(
                [baseline.outcomes[q] for q in shared],
                [other.outcomes[q] for q in shared],
                resamples=resamples,
                seed=seed,
            )
        comparisons.append(Comparison(baseline.run, other.run, result))
    return comparisons


def comparison_tables(summaries: Sequence[RunSummary], comparisons: Sequence[Comparison]) -> list[TextTable]:
    runs = [s.run for s in summaries]
    tables = [_metrics_table(summaries)]
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
    if comparisons:
        tables.append(_bootstrap_table(comparisons))
    return tables


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


def _metrics_table(summaries: Sequence[RunSummary]) -> TextTable:
    per_run = [metric_rows(s) for s in summaries]
    labels = list(dict.fromkeys(label for rows in per_run for label, _, _ in rows))
    lookup = [{label: (value, higher) for label, value, higher in rows} for rows in per_run]
    text_rows: list[list[str]] = []
    best: set[tuple[int, int]] = set()
    for r, label in enumerate(labels):
        values = [run.get(label, (None, True))[0] for run in lookup]
        higher = next(run[label][1] for run in lookup if label in run)
        text_rows.append([label, *(percent(v) for v in values)])
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


def render_comparison(summaries: Sequence[RunSummary], fmt: str, resamples: int = 10_000) -> str:
    comparisons = compare_to_baseline(summaries, resamples=resamples)
    if fmt == "json":
        document = {
            "runs": [s.to_json() for s in summaries],
            "comparisons": [c.to_json() for c in comparisons],
        }
        return json.dumps(document, ensure_ascii=False, indent=2)
    return render_tables(comparison_tables(summaries, comparisons), fmt)
