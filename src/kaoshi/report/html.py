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
import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, TextIO

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
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
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
    """A run as the report shows it. `samples` are iterated once, for the browser's questions, and `groups`
    (default: `samples`) once, for its filters: each a sequence, or kaoshi.results.grading.StoredSamples
    that reads them from the store each time (`groups` light) rather than holding them."""

    record: RunRecord
    summary: RunSummary
    samples: Iterable[SampleRecord]
    grader: str | None = None  # whose grades of open answers the summary and browser show
    grades: Mapping[str, GradeRecord] = field(default_factory=dict)
    groups: Iterable[SampleRecord] | None = None


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


def present_groupings(combinations: Iterable[Sequence[str | None]]) -> list[str]:
    """The browser's groupings that at least one sample has a value for, coarsest first, from the distinct
    `combinations` of the samples' values of BROWSER_GROUPINGS (in that order); one that repeats a grouping
    before it on every sample (the sample exam's subjects are its domains) is left out."""
    seen = list(combinations)
    shown: list[int] = []
    for index in range(len(BROWSER_GROUPINGS)):
        repeats = any(all(values[index] == values[other] for values in seen) for other in shown)
        if any(values[index] for values in seen) and not repeats:
            shown.append(index)
    return [BROWSER_GROUPINGS[index] for index in shown]


# The groupings the browser shows, and per run each one's filter options with their numbers of questions.
Filters = tuple[list[str], list[dict[str, list[tuple[str, int]]]]]


def browser_filters(runs: Sequence[ReportRun]) -> Filters:
    """The groupings the browser shows (those the report's samples carry) and, per run, each one's filter
    options with their numbers of questions: one pass over each run's samples (ReportRun.groups), holding
    only how many samples have each combination of the groupings' values."""
    counted: list[Counter[tuple[str | None, ...]]] = []
    for run in runs:
        if run.groups is None and iter(run.samples) is run.samples:
            raise ValueError(
                f"run {run.record.name!r}: its samples are an iterator, read once, and the report reads them "
                "twice: give a sequence, or the same samples again as `groups`"
            )
        samples = run.samples if run.groups is None else run.groups
        counted.append(Counter(tuple(group_value(s, key) for key in BROWSER_GROUPINGS) for s in samples))
    groupings = present_groupings(set().union(*counted))
    choices = []
    for combinations in counted:
        by_key: dict[str, dict[str, int]] = {key: {} for key in groupings}
        for values, count in combinations.items():
            for key in groupings:
                value = values[BROWSER_GROUPINGS.index(key)] or UNKNOWN_GROUP
                by_key[key][value] = by_key[key].get(value, 0) + count
        choices.append({key: ordered_choices(key, by_key[key], None) for key in groupings})
    return groupings, choices


def _natural_key(value: str) -> tuple[tuple[int, int, str], ...]:
    """Numbers by value ("2" before "10"), text case-insensitively. A number is compared by its digits,
    never made an int: a name of 5,000 digits is past what int() reads (a store is any file)."""
    parts = re.split(r"([0-9]+)", value.casefold())
    return tuple(
        (0, len(p.lstrip("0")), p.lstrip("0")) if p.isascii() and p.isdigit() else (1, 0, p)
        for p in parts
        if p
    )


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
    and per run its filter options with their counts and its questions (browser_json streams it)."""
    groupings, choices = browser_filters(runs)
    return {
        "none": UNKNOWN_GROUP,
        "groupings": groupings,
        "runs": [
            {"name": r.record.name, "choices": c, "samples": list(_sample_views(r, with_prompts, groupings))}
            for r, c in zip(runs, choices, strict=True)
        ],
    }


def browser_json(
    runs: Sequence[ReportRun], with_prompts: bool = True, filters: Filters | None = None
) -> Iterator[str]:
    """embed_json(browser_data(runs, with_prompts)) in pieces, a sample at a time: the report of runs of a
    million samples is written without holding them (each run's samples are read twice: ReportRun).
    `filters`: browser_filters(runs), where already made."""
    groupings, choices = browser_filters(runs) if filters is None else filters
    yield f'{{"none":{embed_json(UNKNOWN_GROUP)},"groupings":{embed_json(groupings)},"runs":['
    for index, (run, chosen) in enumerate(zip(runs, choices, strict=True)):
        comma = "," if index else ""
        yield f'{comma}{{"name":{embed_json(run.record.name)},"choices":{embed_json(chosen)},"samples":['
        for number, view in enumerate(_sample_views(run, with_prompts, groupings)):
            yield ("," if number else "") + embed_json(view)
        yield "]}"
    yield "]}"


def _sample_views(run: ReportRun, with_prompts: bool, groupings: Sequence[str]) -> Iterator[dict[str, Any]]:
    chat = run.record.spec.chat
    for sample in run.samples:
        yield sample_view(sample, with_prompts, chat, _judge(run, sample.question_id), groupings)


# One encoder for every piece (json.dumps makes one a call for these options): the same text.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def embed_json(value: Any) -> str:
    """JSON safe to place inside a <script> element."""
    text = _ENCODER.encode(value)
    # str.replace of each character present, not str.translate: translate maps every character through
    # Python (measured 10x slower on a report's 200 MB of questions), and most pieces need no escape
    for character, escaped in _JSON_ESCAPES.items():
        if character in text:
            text = text.replace(character, escaped)
    return text


def _sha256_b64(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def summary_tables(runs: Sequence[ReportRun]) -> list[TextTable]:
    summaries = [run.summary for run in runs]
    if len(summaries) == 1:
        return run_tables(summaries[0])
    return comparison_tables(summaries, compare_to_baseline(summaries))


@dataclass(frozen=True)
class Page:
    """What the report's page holds beside its runs and figures: its title, the store it names, whether
    the browser shows each question's prompt, why a plot is missing, and tables after the summary's."""

    title: str = "kaoshi report"
    store: str = ""
    with_prompts: bool = True
    figures_note: str = ""
    extra_tables: Sequence[TextTable] = ()


def build_html(runs: Sequence[ReportRun], figures: Sequence[Figure], page: Page | None = None) -> str:
    """The report as one string (write_html writes the same text to a file a piece at a time)."""
    written = io.StringIO()
    write_html(written, runs, figures, page)
    return written.getvalue()


def write_html(
    out: TextIO, runs: Sequence[ReportRun], figures: Sequence[Figure], page: Page | None = None
) -> None:
    """Write the report to `out`: the page around the question browser's data, and the data a sample at a
    time (browser_json), so that no run's samples are held (ReportRun)."""
    page = page or Page()
    assets = resources.files("kaoshi.report") / "assets"
    style = (assets / "report.css").read_text(encoding="utf-8")
    script = (assets / "report.js").read_text(encoding="utf-8")
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = environment.from_string((assets / "report.html.j2").read_text(encoding="utf-8"))
    filters = browser_filters(runs)
    # the page is rendered with a mark where the data goes, then written around it
    mark = f"kaoshi-browser-data-{os.urandom(16).hex()}"
    rendered = template.render(
        title=page.title,
        version=__version__,
        generated=dt.datetime.now().isoformat(timespec="seconds"),
        store=page.store,
        runs=[r.record for r in runs],
        tables=[*summary_tables(runs), *page.extra_tables],
        figures=[{"title": f.title, "png": base64.b64encode(f.png).decode()} for f in figures],
        figures_note=page.figures_note or "no plots",
        groupings=filters[0],
        data_json=mark,
        style=style,
        style_hash=_sha256_b64(style),
        script=script,
        script_hash=_sha256_b64(script),
    )
    parts = rendered.split(mark)
    if len(parts) != 2:
        raise RuntimeError(f"the report's template places its data {len(parts) - 1} times, not once")
    out.write(parts[0])
    out.writelines(browser_json(runs, page.with_prompts, filters))
    out.write(parts[1])
