"""A run's output profile (kaoshi.analysis.outputs) as a few phrases: what `kaoshi report` prints under its
tables and the viewer's run page shows. Only what the profile knows is said: a run of log-likelihood scores
has no output tokens, a backend that counts no tokens gives no token numbers."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from kaoshi.analysis.outputs import MAX_PERIOD, MIN_LOOP_CHARS, MIN_REPEATS, CountDistribution, OutputProfile
from kaoshi.report.tables import PIPE_WIDTH, output_width
from kaoshi.results.aggregate import RunSummary

LOOP_NOTE = (
    f"loops: answers cut off at the budget whose last characters are one unit of 1 to {MAX_PERIOD} "
    f"characters repeated at least {MIN_REPEATS} times, over {MIN_LOOP_CHARS} characters at least"
)


def _share(count: int, share: float | None) -> str:
    return f"{count:,}" if share is None else f"{count:,} ({100 * share:.1f}%)"


def _spread(counts: CountDistribution) -> str:
    return f"p50 {counts.p50:,} / p90 {counts.p90:,} / p99 {counts.p99:,} / max {counts.max:,}"


def duration(seconds: float) -> str:
    """`0.42 s`, `12.3 s`, `41 min`, `3.4 h`."""
    if seconds < 1:
        return f"{seconds:.2f} s"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _answers(profile: OutputProfile) -> str:
    text = f"{profile.answers:,} answer{'' if profile.answers == 1 else 's'}"
    if profile.generated < profile.answers:  # the others were ranked by log-likelihood or voted
        text += f" ({profile.generated:,} generated)" if profile.generated else " (none generated)"
    if profile.errors:
        text += f", {profile.errors:,} error{'' if profile.errors == 1 else 's'} left out"
    return text


def _tokens(profile: OutputProfile) -> str | None:
    if profile.tokens_in_total is None and profile.tokens_out_total is None:
        return None
    spent = [
        f"{total:,} {direction}"
        for total, direction in ((profile.tokens_in_total, "in"), (profile.tokens_out_total, "out"))
        if total is not None
    ]
    return "tokens " + " / ".join(spent)


def output_phrases(profile: OutputProfile) -> list[str]:
    """The profile as phrases, only those that say something: [] when it knows no tokens, no cut-off
    answer and no model time (a scripted or voted run)."""
    phrases: list[str] = []
    if profile.tokens_out is not None:
        counted = profile.tokens_out.n
        over = "" if counted == profile.generated else f" (over the {counted:,} answers counted)"
        phrases.append(f"tokens out {_spread(profile.tokens_out)}{over}")
    if profile.tokens_reasoning is not None:
        phrases.append(f"reasoning tokens {_spread(profile.tokens_reasoning)}")
    if profile.truncated:
        phrases.append(f"cut off at the budget {_share(profile.truncated, profile.truncated_share)}")
        phrases.append(f"looping to the budget {_share(profile.loops, profile.loops_share)}")
    tokens = _tokens(profile)
    if tokens is not None:
        phrases.append(tokens)
    mean = profile.model_time_mean_s
    if profile.model_time_s and mean is not None:
        phrases.append(f"model time {duration(profile.model_time_s)} ({duration(mean)} an answer)")
    return [_answers(profile), *phrases] if phrases else []


def output_lines(phrases: Sequence[str], width: int | None) -> list[str]:
    """`outputs: ` and the phrases joined by ` · `, broken between phrases to stay within `width` terminal
    cells (None: one line); the lines after the first are indented."""
    if not phrases:
        return []
    lines = [f"outputs: {phrases[0]}"]
    for phrase in phrases[1:]:
        joined = f"{lines[-1]} · {phrase}"
        if width is None or cell_len(joined) <= width:
            lines[-1] = joined
        else:
            lines.append(f"  {phrase}")
    return lines


def outputs_section(summary: RunSummary, fmt: str) -> str:
    """What follows a run's tables: its profile's lines, after a blank line, in the terminal (fitted to
    its width) and in Markdown (one paragraph); "" when the profile says nothing, and in CSV and LaTeX,
    which hold tables only (`--format json` has the whole profile)."""
    if summary.outputs is None or fmt not in ("table", "md"):
        return ""
    width = (output_width() or PIPE_WIDTH) if fmt == "table" else None
    lines = output_lines(output_phrases(summary.outputs), width)
    return "\n\n" + "\n".join(lines) if lines else ""
