"""The self-contained HTML report: summary tables, plots and a per-question browser in one file.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import jinja2

from kaoshi.data.model import format_gold
from kaoshi.prompts.base import Prompt
from kaoshi.qtypes import kind_of
from kaoshi.report.compare import compare_to_baseline, comparison_tables
from kaoshi.report.render import run_tables
from kaoshi.report.tables import TextTable
from kaoshi.results.aggregate import RunSummary
from kaoshi.store.records import GradeRecord, RunRecord, SampleRecord
from kaoshi.version import __version__

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
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


def outcome(sample: SampleRecord) -> str:
    """correct / wrong / unparsed / ambiguous / error / judged / ungraded, as the browser filters them."""
    if sample.status == "error":
        return "error"
    if sample.correct is None:
        judged = not kind_of(sample.qtype).objective and sample.score is not None
        return "judged" if judged else "ungraded"
    if sample.correct:
        return "correct"
    return sample.status if sample.status in ("unparsed", "ambiguous") else "wrong"


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


def sample_view(
    sample: SampleRecord, with_prompts: bool, chat: bool, judge: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "judge": judge,
        "id": sample.question_id,
        "type": sample.qtype,
        "domain": sample.domain,
        "subject": sample.subject,
        "outcome": outcome(sample),
        "gold": format_gold(sample.gold),
        "answer": format_gold(sample.answer) if sample.answer is not None else "",
        "response": sample.response,
        "prompt": Prompt.from_stored(sample.prompt, chat).display() if with_prompts else None,
        "error": sample.error,
        "score": sample.score,
        "points": sample.points,
    }


def _judge(run: ReportRun, question_id: str) -> dict[str, Any] | None:
    grade = run.grades.get(question_id)
    return judge_view(run.grader, grade) if grade is not None and run.grader else None


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
    data = {
        "runs": [
            {
                "name": r.record.name,
                "samples": [
                    sample_view(s, with_prompts, r.record.spec.chat, _judge(r, s.question_id))
                    for s in r.samples
                ],
            }
            for r in runs
        ]
    }
    return template.render(
        title=title,
        version=__version__,
        generated=dt.datetime.now().isoformat(timespec="seconds"),
        store=store,
        runs=[r.record for r in runs],
        tables=[*summary_tables(runs), *extra_tables],
        figures=[{"title": f.title, "png": base64.b64encode(f.png).decode()} for f in figures],
        figures_note=figures_note or "no plots",
        data_json=embed_json(data),
        style=style,
        style_hash=_sha256_b64(style),
        script=script,
        script_hash=_sha256_b64(script),
    )
