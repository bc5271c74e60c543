"""A run's summary as tables: grouped tallies, metrics, the benchmark's own measurements and exam points.
What a benchmark reports beyond what every exam has is rendered from its measurements
(kaoshi.results.measurement): a column of the tally tables, a row of the metrics table, a table of its own."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from kaoshi.report.outputs import outputs_section
from kaoshi.report.tables import TEXT_FORMATS, TextTable, render_tables
from kaoshi.results.aggregate import RunSummary
from kaoshi.results.measurement import Measurement
from kaoshi.results.tally import Tally
from kaoshi.store.coverage import Coverage
from kaoshi.store.pairing import conflict_note
from kaoshi.store.settings import describe_settings

# a report shows tokens and costs only when asked (--price), k-sample numbers where a run has them
if TYPE_CHECKING:
    from kaoshi.analysis.cost import Price, Usage
    from kaoshi.results.repeats import RepeatSummary

FORMATS = (*TEXT_FORMATS, "json")
ERROR_RATE = "error rate"
_HEADERS = (
    "n",
    "accuracy",
    "95% CI",
    "correct",
    "graded",
    "unparsed",
    "ambiguous",
    "errors",
    "ungraded",
    "points",
)


_JUDGED_NOTE = (
    "graded includes the open answers a judge scored; accuracy and its CI are over the objective ones"
)


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def interval_text(tally: Tally) -> str:
    interval = tally.interval
    return "—" if interval is None else f"{100 * interval[0]:.1f}–{100 * interval[1]:.1f}"


def compared_on(graded: int, runs: int) -> str:
    """What a comparison of runs rests on: `compared on 150 questions graded by all 3 runs`."""
    who = "both runs" if runs == 2 else f"all {runs} runs"
    return f"compared on {graded} question{'' if graded == 1 else 's'} graded by {who}"


def not_compared(runs: int) -> str:
    return f"not compared: no question is answered by all {runs} runs; each run over its own questions"


def coverage_table(title: str, coverage: Sequence[Coverage], conflicts: Sequence[str] = ()) -> TextTable:
    """Each run's coverage, one row per run: incomplete runs say so in the status column. `conflicts`:
    ids left unpaired because they hold different questions in different runs."""
    rows = [
        [c.run, str(c.questions), str(c.answered), str(c.graded), str(c.errors), str(c.missing), c.status]
        for c in coverage
    ]
    legend = "answered: an output stored (unreadable ones too); incomplete: errors, missing or not finished"
    return TextTable(
        title,
        ("run", "questions", "answered", "graded", "errors", "missing", "status"),
        rows,
        note="; ".join(n for n in (conflict_note(conflicts), legend) if n),
    )


def _row(label: str, tally: Tally) -> list[str]:
    return [
        label,
        str(tally.n),
        percent(tally.accuracy),
        interval_text(tally),
        str(tally.correct),
        str(tally.graded),
        str(tally.unparsed),
        str(tally.ambiguous),
        str(tally.errors),
        str(tally.ungraded),
        f"{tally.points:g}/{tally.max_points:g}",
    ]


# How long each column of a tally table stays in a narrow terminal (higher stays longer): the label,
# accuracy and its interval, n and points first; the counts behind them after (a measurement's column,
# after the interval: 16).
_PRIORITY = (20, 17, 19, 18, 11, 12, 14, 13, 15, 10, 16)
_COLUMN_PRIORITY = 16


CUT_OFF_HEADER = "cut off"


def _tally_table(
    summary: RunSummary,
    title: str,
    label: str,
    tallies: Sequence[tuple[str, Tally]],
    note: str,
    grouping: str | None = None,
) -> TextTable:
    """A tally table (of the groups of `grouping`; None: overall), with a column of the answers cut off
    at the token budget where the run has any (beside the accuracy they lower) and a column for each of
    the benchmark's measurements that has one (after those: the QualBench F1)."""
    rows = [_row(name, tally) for name, tally in tallies]
    headers: tuple[str, ...] = _HEADERS
    priority: tuple[int, ...] = _PRIORITY
    if summary.overall.truncated:
        rows = [
            [*row[:4], str(tally.truncated), *row[4:]] for row, (_, tally) in zip(rows, tallies, strict=True)
        ]
        headers = (*_HEADERS[:3], CUT_OFF_HEADER, *_HEADERS[3:])
        priority = (*_PRIORITY[:4], 17, *_PRIORITY[4:])
    columned = [m for m in summary.measurements if m.column]
    if columned:
        # after the interval, and the cut-off count beside it
        at = headers.index(CUT_OFF_HEADER if CUT_OFF_HEADER in headers else "95% CI") + 1
        cells = [[_column_cell(m, grouping, name) for m in columned] for name, _ in tallies]
        rows = [[*row[: at + 1], *more, *row[at + 1 :]] for row, more in zip(rows, cells, strict=True)]
        headers = (*headers[:at], *(m.column for m in columned), *headers[at:])
        priority = (*priority[: at + 1], *(_COLUMN_PRIORITY for _ in columned), *priority[at + 1 :])
    return TextTable(title, (label, *headers), rows, note=note, priority=priority)


def _column_cell(measurement: Measurement, grouping: str | None, group: str) -> str:
    """A measurement's cell in a tally table: its value overall, or the group's."""
    grouped = measurement.by_group.get(grouping, {}) if grouping is not None else {}
    value = measurement.value if grouping is None else grouped.get(group)
    return number_text(value, measurement.rate)


def number_text(value: float | None, rate: bool) -> str:
    """A number as the tables show it: a rate as a percentage, another as it is."""
    if rate or value is None:
        return percent(value)
    return f"{value:g}"


def rate(count: int, total: int) -> float | None:
    return count / total if total else None


class MetricRow(NamedTuple):
    """A row of the metrics table: what it is, its value, whether higher is better, and its text."""

    label: str
    value: float | None
    higher_is_better: bool
    text: str


def _rate_row(label: str, value: float | None, higher_is_better: bool) -> MetricRow:
    return MetricRow(label, value, higher_is_better, percent(value))


def metric_rows(summary: RunSummary) -> list[MetricRow]:
    """The headline metrics: accuracy over questions and groups, the benchmark's own measurements (those
    shown as a row), points, and the rates of unreadable, cut-off and failed answers."""
    overall = summary.overall
    rows = [_rate_row("accuracy (micro, over questions)", overall.accuracy, True)]
    for key, value in summary.macro.items():
        rows.append(_rate_row(f"accuracy (macro, mean over {key}s)", value, True))
    rows += [MetricRow(m.label, m.value, m.higher_is_better, m.text) for m in summary.measurements if m.text]
    if overall.max_points:
        rows.append(_rate_row("points earned / available", overall.points / overall.max_points, True))
    rows.append(_rate_row("unparsed rate", rate(overall.unparsed, overall.checked), False))
    rows.append(_rate_row("ambiguous rate", rate(overall.ambiguous, overall.checked), False))
    if overall.truncated:  # shown where a backend said so: the budget was too small for these answers
        label = f"cut off by the token budget ({overall.truncated} of {overall.graded} graded answers)"
        rows.append(_rate_row(label, rate(overall.truncated, overall.graded), False))
    rows.append(_rate_row(ERROR_RATE, rate(overall.errors, overall.n), False))
    return rows


def settings_note(summary: RunSummary) -> str:
    """`settings: val · 5-shot · chat template · …`, what the numbers were produced with ("" unknown)."""
    return "" if summary.spec is None else f"settings: {describe_settings(summary.spec)}"


def served_note(summary: RunSummary) -> str:
    """`12 of 400 replies were served by another model than openai:gpt-4o: gpt-4o-mini (12)`, where a
    server said so ("" when every reply came from the model asked for)."""
    if not summary.served_models:
        return ""
    served = sum(summary.served_models.values())
    asked = summary.spec.model if summary.spec is not None else "the one asked for"
    names = ", ".join(f"{name} ({count})" for name, count in summary.served_models.items())
    verb = "was" if served == 1 else "were"
    return f"{served} of {summary.overall.n} replies {verb} served by another model than {asked}: {names}"


def usage_table(usages: Sequence[tuple[str, Usage, Price | None]]) -> TextTable:
    """Each run's tokens as its servers counted them, and what they cost at its model's price (where one
    is given)."""
    priced = any(price is not None for _, _, price in usages)
    rows = []
    for run, usage, price in usages:
        cost = [f"{usage.cost(price):,.4f}" if price is not None else "—"] if priced else []
        counts = (usage.answers, usage.prompt, usage.cached, usage.completion, usage.reasoning)
        rows.append([run, *(f"{count:,}" for count in counts), *cost])
    described = sorted({price.describe() for _, _, price in usages if price is not None})
    notes = [f"priced at {'; '.join(described)}"] if described else []
    unsaid = sum(usage.uncounted for _, usage, _ in usages)
    if unsaid:
        notes.append(f"{unsaid} answer(s) came without usage from their server: not counted")
    taken = sum(usage.taken for _, usage, _ in usages)
    if taken:
        notes.append(f"{taken} answer(s) taken from other runs or the cache: paid for there, not counted")
    batched = sum(usage.batched for _, usage, _ in usages)
    if batched:
        notes.append(f"{batched} answer(s) from a provider's batch: priced at its batch share")
    return TextTable(
        "tokens" + (" and cost" if priced else ""),
        ("run", "answers", "prompt", "of them cached", "completion", "of them reasoning",
         *(["cost"] if priced else [])),
        rows,
        note="; ".join(notes),
    )  # fmt: skip


def estimate_table(summary: RunSummary) -> TextTable:
    """A run of a sample of the exam: the full exam's accuracy estimated from it, or why there is none."""
    title = f"{summary.run} — the full exam, estimated from a sample"
    sample = summary.spec.sample if summary.spec is not None else None
    drawn = f"{sample['size']} questions drawn by {sample['by']}, seed {sample['seed']}" if sample else ""
    estimate = summary.estimate
    if estimate is None:
        return TextTable(title, ("", "sample"), [["no estimate", drawn]], note=summary.estimate_note)
    interval = f"{percent(estimate.low)}–{percent(estimate.high)}"
    checked = f"{estimate.checked} answers checked; the exam has {estimate.population} to check"
    return TextTable(
        title,
        ("", "accuracy", f"{estimate.confidence:.0%} interval", "rests on", "sample"),
        [["estimate", percent(estimate.accuracy), interval, checked, drawn]],
        note=(
            "a stratified random sample (kaoshi run --sample): each part of the exam weighed by its share, "
            "with the finite-population correction; an estimate, not the exam's score. The other tables "
            "are the sample's own numbers"
        ),
    )


def run_tables(summary: RunSummary) -> list[TextTable]:
    note = _JUDGED_NOTE if summary.overall.judged else ""
    # the served models are named once, under the overall table: the numbers are partly theirs
    first = (
        f"every table but the k-sample one shows the first of each question's {summary.repeats.k} samples"
        if summary.repeats is not None
        else ""
    )
    overall_note = "; ".join(n for n in (settings_note(summary), served_note(summary), first, note) if n)
    tables = [_tally_table(summary, f"{summary.run} — overall", "", [("all", summary.overall)], overall_note)]
    if summary.estimate is not None or summary.estimate_note:
        tables.append(estimate_table(summary))
    if summary.repeats is not None:
        tables.append(repeats_table(summary.run, summary.repeats))
    for key, table in summary.groups.items():
        tables.append(_tally_table(summary, f"{summary.run} — by {key}", key, list(table.items()), note, key))
    tables.append(
        TextTable(
            f"{summary.run} — metrics",
            ("metric", "value"),
            [[row.label, row.text] for row in metric_rows(summary)],
        )
    )
    if summary.has_subjective:
        tables.append(parts_table(summary))
    for measurement in summary.measurements:
        if measurement.table is not None:
            shown = measurement.table
            tables.append(
                TextTable(
                    f"{summary.run} — {shown.title}",
                    shown.header,
                    [list(row) for row in shown.rows],
                    note=shown.note,
                )
            )
    if any(row.standard is not None for row in summary.subject_points):
        tables.append(_points_table(summary))
    if summary.group_points:
        tables.append(
            TextTable(
                f"{summary.run} — group totals",
                ("group", "subjects", "score", "standard"),
                [
                    [g.group, str(g.subjects), f"{g.scaled:.1f}", f"{g.standard:g}"]
                    for g in summary.group_points
                ],
            )
        )
    return tables


def repeats_table(run: str, repeats: RepeatSummary) -> TextTable:
    """A run of k samples a question: avg@k with its interval, maj@k, pass@k, how consistent the samples
    are, and the numbers computed on each sample index and averaged."""
    k = repeats.k
    low_high = (
        f" [{100 * repeats.avg_interval[0]:.1f}, {100 * repeats.avg_interval[1]:.1f}]"
        if repeats.avg_interval
        else ""
    )
    rows = [
        [f"avg@{k} (mean accuracy over samples; interval: a question's samples one cluster)",
         percent(repeats.avg_at_k) + low_high],
        [f"maj@{k} (the most frequent answer; {repeats.maj_ties} tie(s), each the share of tied answers "
         "that are right)", percent(repeats.maj_at_k)],
        *([f"pass@{kk} (unbiased estimator)", percent(value)] for kk, value in repeats.pass_at_k.items()),
        ["consistency (mean share of samples giving the most frequent answer)", percent(repeats.consistency)],
        ["questions whose samples all agree", percent(repeats.unanimous)],
        ["accuracy of each sample", " / ".join(percent(value) for value in repeats.per_sample)],
    ]  # fmt: skip
    for name, value in repeats.means.items():
        if name == "accuracy":
            continue
        shown = percent(value) if name in repeats.rates else f"{value:.1f}"
        rows.append([f"{name.replace('.', ': ', 1)} (mean over samples)", shown])
    return TextTable(
        f"{run} — k samples (k={k})",
        ("metric", "value"),
        rows,
        note=f"{repeats.questions} objective questions, {repeats.samples} graded samples; open answers are "
        "judged on the first sample only, so points are averaged only where the exam has none",
    )


def parts_table(summary: RunSummary) -> TextTable:
    """Objective against subjective questions: points earned as a share of the points available."""
    rows = [
        [
            name,
            str(tally.n),
            f"{tally.scored}/{tally.n}",
            f"{tally.points:g}/{tally.max_points:g}",
            percent(tally.points_rate),
            percent(tally.accuracy),
        ]
        for name, tally in [*summary.parts.items(), ("all", summary.overall)]
    ]
    return TextTable(
        f"{summary.run} — objective vs subjective",
        ("part", "questions", "scored", "points", "% of points", "accuracy"),
        rows,
        note="open answers are scored once a judge has graded them (kaoshi judge); accuracy: objective only",
    )


def _points_table(summary: RunSummary) -> TextTable:
    rows = []
    for row in summary.subject_points:
        scaled = row.scaled
        rows.append(
            [
                row.subject,
                row.group or "",
                f"{row.points:g}/{row.max_points:g}",
                f"{row.scored}/{row.questions}",
                "—" if row.standard is None else f"{row.standard:g}",
                "—" if scaled is None else f"{scaled:.1f}",
            ]
        )
    return TextTable(
        f"{summary.run} — points by subject",
        ("subject", "group", "points", "scored", "standard", "score"),
        rows,
        note="score = standard × points / points available over the scored questions",
    )


def render_summary(summary: RunSummary, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(summary.to_json(), ensure_ascii=False, indent=2)
    return render_tables(run_tables(summary), fmt) + outputs_section(summary, fmt)
