"""Figures of runs: grouped bars with 95% intervals, and the radar profile papers show per domain.

matplotlib is optional (`pip install 'kaoshi[plot]'`); figures are drawn on the Agg canvas without
pyplot, so no global figure state is touched.
"""

from __future__ import annotations

import importlib.util
import io
import math
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from kaoshi.errors import InputError
from kaoshi.report.fonts import cjk_font_family, missing_font_message
from kaoshi.results.aggregate import RunSummary
from kaoshi.results.metrics import UNKNOWN_GROUP

PLOT_KINDS = ("bar", "radar")
IMAGE_SUFFIXES = (".png", ".svg", ".pdf")


class PlotError(InputError):
    pass


NO_MATPLOTLIB = "plots need matplotlib: pip install 'kaoshi[plot]'"


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotError(NO_MATPLOTLIB) from None
    return matplotlib


def plot_problem(summaries: Sequence[RunSummary], key: str) -> str | None:
    """Why the runs' `key` cannot be drawn (matplotlib missing, no such groups), found without importing
    matplotlib (a second of a page that only links to the figure); None when it can."""
    if importlib.util.find_spec("matplotlib") is None:
        return NO_MATPLOTLIB
    try:
        group_names(summaries, key)
    except PlotError as exc:
        return str(exc)
    return None


def ascii_labels(
    labels: Sequence[str], stand_in: str, english: Mapping[str, str] = MappingProxyType({})
) -> tuple[list[str], dict[str, str]]:
    """Labels a font without Chinese glyphs can draw: ASCII labels as they are, Chinese names `english`
    knows in English (kaoshi.benchmarks.english_names: the names the benchmarks' papers use), others as
    `{stand_in} N`; and the replaced label -> original mapping."""
    drawn: list[str] = []
    replaced: dict[str, str] = {}
    stand_ins = 0
    for label in labels:
        if label.isascii():
            drawn.append(label)
            continue
        if label in english:
            ascii_label = english[label]
        else:
            stand_ins += 1
            ascii_label = f"{stand_in} {stand_ins}"
        drawn.append(ascii_label)
        replaced[ascii_label] = label
    return drawn, replaced


def literal(text: str) -> str:
    """`text` escaped so matplotlib draws it as it is: two `$` start mathtext (a subject called `$x^{2$`
    raised a parse error, `a$b$c` drew an italic b), and an escaped `\\$` is drawn as `$`. The escape goes
    with the string, so unlike `parse_math=False` it also holds on the tick labels matplotlib copies from
    the first one (`Text.update_from` does not copy `parse_math`)."""
    return text.replace("$", r"\$")


def _drawable(
    names: Sequence[str], runs: Sequence[str], key: str, cjk: bool, english: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """Group and run labels to draw, escaped for matplotlib: as they are with a CJK font, else ASCII and
    one warning."""
    group_labels, run_labels = list(names), list(runs)
    if not cjk:
        group_labels, groups_replaced = ascii_labels(names, key, english)
        run_labels, runs_replaced = ascii_labels(runs, "run", english)
        replaced = {**groups_replaced, **runs_replaced}
        mapping = "; ".join(f"{label} = {original}" for label, original in replaced.items())
        message = missing_font_message()
        if mapping:
            message += f". Drawing ASCII labels instead: {mapping}"
        warnings.warn(message, stacklevel=3)
    return [literal(label) for label in group_labels], [literal(run) for run in run_labels]


def _figure(width: float, height: float, polar: bool = False) -> tuple[Any, Any, list[str]]:
    """A white Agg figure with one axes, and the font families to draw text with (CJK first; only
    DejaVu Sans when there is no CJK font)."""
    _matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    family = cjk_font_family()
    fonts = [family, "DejaVu Sans"] if family else ["DejaVu Sans"]
    figure = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(projection="polar" if polar else None)
    figure.set_facecolor("white")
    return figure, axes, fonts


# The groupings a plot falls back to, in order, when none is asked for: QualBench's domains, C-Eval's and
# CMMLU's categories, a benchmark's subjects or tasks, and question types, which every run has.
PLOT_GROUPINGS = ("domain", "category", "subject", "type")


def natural_grouping(summaries: Sequence[RunSummary]) -> str:
    """The first of PLOT_GROUPINGS the runs' questions carry (summaries made with every grouping)."""
    for key in PLOT_GROUPINGS:
        if any(name != UNKNOWN_GROUP for s in summaries for name in s.groups.get(key, {})):
            return key
    return "type"


def group_names(summaries: Sequence[RunSummary], key: str) -> list[str]:
    names = sorted({name for s in summaries for name in s.groups.get(key, {}) if name != UNKNOWN_GROUP})
    if not names:
        raise PlotError(f"the runs have no {key} to plot (questions carry no {key})")
    return names


def _accuracy(summary: RunSummary, key: str, name: str) -> float | None:
    """A run's accuracy in one group; None where it checked no answer there (absent, or open answers)."""
    tally = summary.groups.get(key, {}).get(name)
    return tally.accuracy if tally else None


NO_ACCURACY = "n/a"  # drawn where a run has no checked answer in a group: not the same as 0%


def bar_chart(
    summaries: Sequence[RunSummary],
    key: str,
    title: str = "",
    english: Mapping[str, str] = MappingProxyType({}),
) -> Any:
    """One group of bars per `key` value, one bar per run, whiskers at the 95% Wilson interval. Each bar
    is labelled with its value, so 0% shows; a group a run has no accuracy in gets 'n/a', not a bar."""
    names = group_names(summaries, key)
    figure, axes, fonts = _figure(max(6.0, 1.2 * len(names) * max(1, len(summaries)) ** 0.5 + 2), 4.5)
    labels, runs = _drawable(names, [s.run for s in summaries], key, len(fonts) > 1, english)
    width = 0.8 / len(summaries)
    for i, summary in enumerate(summaries):
        heights, low, high = [], [], []
        for name in names:
            tally = summary.groups.get(key, {}).get(name)
            accuracy = tally.accuracy if tally else None
            interval = tally.interval if tally else None
            heights.append(100 * accuracy if accuracy is not None else math.nan)
            low.append(100 * (accuracy - interval[0]) if accuracy is not None and interval else 0.0)
            high.append(100 * (interval[1] - accuracy) if accuracy is not None and interval else 0.0)
        positions = [j + (i - (len(summaries) - 1) / 2) * width for j in range(len(names))]
        axes.bar(positions, heights, width, label=runs[i], yerr=[low, high], capsize=3)
        for x, height, above in zip(positions, heights, high, strict=True):
            shown = NO_ACCURACY if math.isnan(height) else f"{height:.0f}"
            top = 0.0 if math.isnan(height) else height + above
            axes.text(x, top + 1, shown, ha="center", va="bottom", fontsize=7, color="0.25")
    axes.set_xticks(range(len(names)), labels, fontfamily=fonts)
    axes.set_ylabel("accuracy (%)", fontfamily=fonts)
    axes.set_ylim(0, 100)
    axes.grid(axis="y", alpha=0.3)
    axes.set_title(literal(title or f"accuracy by {key} (95% Wilson intervals)"), fontfamily=fonts)
    axes.legend(prop={"family": fonts})
    return figure


def radar_chart(
    summaries: Sequence[RunSummary],
    key: str,
    title: str = "",
    english: Mapping[str, str] = MappingProxyType({}),
) -> Any:
    """Each run's accuracy profile over the `key` values on a polar chart (needs three or more). A value
    no run has an accuracy in (e.g. ungraded open answers) is left out and named under the chart, never
    drawn as 0%; a run without an accuracy where others have one leaves a gap in its line."""
    every = group_names(summaries, key)
    names = [n for n in every if any(_accuracy(s, key, n) is not None for s in summaries)]
    left_out = [n for n in every if n not in names]
    if len(names) < 3:
        without = f" ({', '.join(left_out)} without an accuracy)" if left_out else ""
        raise PlotError(
            f"a radar chart needs at least 3 {key} values with an accuracy, "
            f"the runs have {len(names)}{without}"
        )
    figure, axes, fonts = _figure(6.0, 6.0, polar=True)
    all_labels, runs = _drawable(every, [s.run for s in summaries], key, len(fonts) > 1, english)
    label_of = dict(zip(every, all_labels, strict=True))
    labels = [label_of[n] for n in names]
    axes.set_theta_offset(math.pi / 2)  # first value at the top, then clockwise, as papers draw them
    axes.set_theta_direction(-1)
    angles = [2 * math.pi * i / len(names) for i in range(len(names))]
    for summary, run in zip(summaries, runs, strict=True):
        accuracies = [_accuracy(summary, key, n) for n in names]
        values = [math.nan if a is None else 100 * a for a in accuracies]
        axes.plot([*angles, angles[0]], [*values, values[0]], label=run, linewidth=1.5)
        if not any(math.isnan(v) for v in values):  # a fill would bridge the gap with a made-up edge
            axes.fill([*angles, angles[0]], [*values, values[0]], alpha=0.15)
    axes.set_xticks(angles, labels, fontfamily=fonts)
    axes.set_ylim(0, 100)
    axes.set_title(literal(title or f"accuracy by {key}"), fontfamily=fonts)
    axes.legend(loc="upper right", bbox_to_anchor=(1.15, 1.1), prop={"family": fonts})
    if left_out:
        shown_out = ", ".join(label_of[n] for n in left_out)
        figure.text(0.02, 0.01, f"not drawn, no accuracy: {shown_out}", fontsize=8, fontfamily=fonts)
    return figure


def draw(
    summaries: Sequence[RunSummary], key: str, kind: str, english: Mapping[str, str] = MappingProxyType({})
) -> Any:
    """A bar or radar chart; `english` names Chinese labels for a font without Chinese glyphs."""
    if kind == "bar":
        return bar_chart(summaries, key, english=english)
    if kind == "radar":
        return radar_chart(summaries, key, english=english)
    raise PlotError(f"unknown plot kind {kind!r} (choose from {', '.join(PLOT_KINDS)})")


def save_figure(figure: Any, path: Path) -> None:
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        raise PlotError(f"{path}: the output must end in {', '.join(IMAGE_SUFFIXES)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, facecolor="white")


def png_bytes(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", facecolor="white")
    return buffer.getvalue()
