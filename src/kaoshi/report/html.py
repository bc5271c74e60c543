"""The self-contained HTML report: summary tables, plots and a per-question browser in one file.

The browser's columns and filters are the groupings the report's questions carry (domain, category,
subject group, subject, type), each where some question has a value for it: an exam of subjects in
categories is browsed by category and subject, an exam of domains by domain.

Everything the model wrote is data, never markup: Jinja autoescapes the tables, the question data is
embedded as JSON with `<`, `>` and `&` escaped (so no `</script>` can end the block), the browser code
places it with textContent only, and a Content-Security-Policy allows only our own script and style
(by hash), so even a slip elsewhere could not run an injected script or handler.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

from kaoshi.data.model import QuestionType, format_gold
from kaoshi.prompts.base import Prompt
from kaoshi.report.compare import compare_to_baseline, comparison_tables
from kaoshi.report.differences import outcome as outcome
from kaoshi.report.render import run_tables
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import GROUP_KEYS, RunSummary
from kaoshi.results.metrics import CATEGORY_ORDER, UNKNOWN_GROUP
from kaoshi.store.records import GradeRecord, RunRecord, SampleRecord
from kaoshi.version import __version__

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}
# The groupings the question browser can show, coarsest first (keys of GROUP_KEYS, so the browser groups
# as the summary tables do). Each becomes a column and a filter where a sample in the report has a value.
BROWSER_GROUPINGS = ("domain", "category", "group", "subject", "type")
# Values listed in this order before any other (which follow by name): the categories in the order the
# category tables show them, the question types in the order kaoshi defines them.
_FIRST_VALUES: dict[str, tuple[str, ...]] = {
    "category": CATEGORY_ORDER,
    "type": tuple(t.value for t in QuestionType),
}


@dataclass(frozen=True)
class ReportRun:
    record: RunRecord
    summary: RunSummary
    samples: Sequence[SampleRecord]
    grader: str | None = None  # whose grades of open answers the summary and browser show
    grades: Mapping[str, GradeRecord] = field(default_factory=dict)


@dataclass(frozen=True)
class Figure:
    title: str
    png: bytes


def judge_view(grader: str, grade: GradeRecord) -> dict[str, Any]:
    """The grade of an open answer: final 0-10 score, status, and each judge round's reply."""
    return {
        "grader": grader,
        "status": grade.status,
        "score": grade.score,
        "rounds": [
            {"judge": r.get("judge"), "score": r.get("score"), "reply": r.get("reply") or r.get("error")}
            for r in grade.rounds
        ],
    }


def group_value(sample: SampleRecord, key: str) -> str | None:
    """The sample's value of a grouping (None: it has none)."""
    return GROUP_KEYS[key](sample) or None


def present_groupings(samples: Sequence[SampleRecord]) -> list[str]:
    """The browser's groupings that at least one of `samples` has a value for, coarsest first; one that
    repeats a grouping before it on every sample (the sample exam's subjects are its domains) is left out."""
    shown: list[str] = []
    for key in BROWSER_GROUPINGS:
        values = [group_value(s, key) for s in samples]
        repeats = any(values == [group_value(s, other) for s in samples] for other in shown)
        if any(values) and not repeats:
            shown.append(key)
    return shown


def _natural_key(value: str) -> tuple[tuple[int, int, str], ...]:
    """Numbers by value ("2" before "10"), text case-insensitively. A number is compared by its digits,
    never made an int: a name of 5,000 digits is past what int() reads (a store is any file)."""
    parts = re.split(r"([0-9]+)", value.casefold())
    return tuple(
        (0, len(p.lstrip("0")), p.lstrip("0")) if p.isascii() and p.isdigit() else (1, 0, p)
        for p in parts
        if p
    )


def grouping_choices(samples: Sequence[SampleRecord], key: str) -> list[tuple[str, int]]:
    """A filter's options: each value of the grouping among `samples` with its number of questions."""
    return ordered_choices(key, Counter(group_value(s, key) or UNKNOWN_GROUP for s in samples), None)


def ordered_choices(key: str, counts: Mapping[str, int], chosen: str | None) -> list[tuple[str, int]]:
    """A filter's options with their counts: the grouping's own order where it has one, else by name;
    (none) last. The chosen value stays listed when nothing matches it any more."""
    values = set(counts) | ({chosen} if chosen else set())
    first = _FIRST_VALUES.get(key, ())
    named = sorted(
        (v for v in values if v != UNKNOWN_GROUP),
        key=lambda v: (first.index(v) if v in first else len(first), _natural_key(v), v),
    )
    if UNKNOWN_GROUP in values:
        named.append(UNKNOWN_GROUP)
    return [(value, counts.get(value, 0)) for value in named]


def sample_view(
    sample: SampleRecord,
    with_prompts: bool,
    chat: bool,
    judge: dict[str, Any] | None = None,
    groupings: Sequence[str] = BROWSER_GROUPINGS,
) -> dict[str, Any]:
    # reasoning only where a sample has some: the browser's data for every other sample stays as it was
    reasoning = {"reasoning": sample.reasoning} if sample.reasoning else {}
    return {
        "judge": judge,
        "id": sample.question_id,
        "groups": {key: group_value(sample, key) for key in groupings},
        "outcome": outcome(sample),
        "gold": format_gold(sample.gold),
        "answer": format_gold(sample.answer) if sample.answer is not None else "",
        "response": sample.response,
        **reasoning,
        "prompt": Prompt.from_stored(sample.prompt, chat).display() if with_prompts else None,
        "error": sample.error,
        "score": sample.score,
        "points": sample.points,
    }


def _judge(run: ReportRun, question_id: str) -> dict[str, Any] | None:
    grade = run.grades.get(question_id)
    return judge_view(run.grader, grade) if grade is not None and run.grader else None


def browser_data(runs: Sequence[ReportRun], with_prompts: bool = True) -> dict[str, Any]:
    """What the question browser is given: the groupings it shows (those the report's samples carry),
    and per run its filter options with their counts and its questions."""
    groupings = present_groupings([s for r in runs for s in r.samples])
    return {
        "none": UNKNOWN_GROUP,
        "groupings": groupings,
        "runs": [
            {
                "name": r.record.name,
                "choices": {key: grouping_choices(r.samples, key) for key in groupings},
                "samples": [
                    sample_view(s, with_prompts, r.record.spec.chat, _judge(r, s.question_id), groupings)
                    for s in r.samples
                ],
            }
            for r in runs
        ],
    }


def embed_json(value: Any) -> str:
    """JSON safe to place inside a <script> element."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)


def _sha256_b64(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def summary_tables(runs: Sequence[ReportRun]) -> list[TextTable]:
    summaries = [run.summary for run in runs]
    if len(summaries) == 1:
        return run_tables(summaries[0])
    return comparison_tables(summaries, compare_to_baseline(summaries))


def build_html(
    runs: Sequence[ReportRun],
    figures: Sequence[Figure],
    *,
    title: str = "kaoshi report",
    store: str = "",
    with_prompts: bool = True,
    figures_note: str = "",
    extra_tables: Sequence[TextTable] = (),
) -> str:
    assets = resources.files("kaoshi.report") / "assets"
    style = (assets / "report.css").read_text(encoding="utf-8")
    script = (assets / "report.js").read_text(encoding="utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string((assets / "report.html.j2").read_text(encoding="utf-8"))
    data = browser_data(runs, with_prompts)
    return template.render(
        title=title,
        version=__version__,
        generated=dt.datetime.now().isoformat(timespec="seconds"),
        store=store,
        runs=[r.record for r in runs],
        tables=[*summary_tables(runs), *extra_tables],
        figures=[{"title": f.title, "png": base64.b64encode(f.png).decode()} for f in figures],
        figures_note=figures_note or "no plots",
        groupings=data["groupings"],
        data_json=embed_json(data),
        style=style,
        style_hash=_sha256_b64(style),
        script=script,
        script_hash=_sha256_b64(script),
    )
