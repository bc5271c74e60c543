"""The samples page (one page of a run's samples, filtered in SQL) and the page of one sample: the prompt as
sent, the raw response, what was extracted and how, the gold answer, the grade and the judges' rounds."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from kaoshi.data.model import format_gold
from kaoshi.prompts.base import Prompt
from kaoshi.report.html import ordered_choices, outcome
from kaoshi.results.grading import apply_grades
from kaoshi.results.metrics import UNKNOWN_GROUP
from kaoshi.store.records import GradeRecord, SampleRecord
from kaoshi.view.filters import FACETS, OUTCOMES, PAGE_SIZE, Cell, SampleFilter, choice_counts, matching
from kaoshi.view.pages import NotFound, Viewer
from kaoshi.view.queries import (
    latest_grader,
    neighbours,
    one_sample,
    reading,
    repeat_samples,
    run_spec,
    sample_cells,
    sample_grades,
    sample_rows,
)


def shown_facets(cells: Sequence[Cell]) -> list[str]:
    """The groupings some sample has a value of, less one that repeats an earlier one on every sample (the
    sample exam's subjects are its domains)."""
    shown: list[str] = []
    for key in FACETS:
        values = [cell.values[key] for cell in cells]
        repeats = any(values == [cell.values[other] for cell in cells] for other in shown)
        if any(v != UNKNOWN_GROUP for v in values) and not repeats:
            shown.append(key)
    return shown


def samples_page(viewer: Viewer, name: str, params: dict[str, str]) -> dict[str, Any]:
    chosen = SampleFilter.from_query(params)
    state = viewer.state()
    with reading(viewer.path) as db:
        if run_spec(db, name) is None:
            raise NotFound(f"no run named {name!r} in {viewer.path}")
        grader = latest_grader(db, name)
        cells = viewer.memo.get(("cells", name, state), lambda: sample_cells(db, name, grader))
        rows, more = sample_rows(db, name, grader, chosen)
    total = None if chosen.text else matching(cells, chosen)
    facets = shown_facets(cells)
    outcome_counts = choice_counts(cells, chosen, "outcome")
    return {
        "run": name,
        "grader": grader,
        "filter": chosen,
        "facets": facets,
        "choices": {
            key: ordered_choices(key, choice_counts(cells, chosen, key), chosen.facets.get(key))
            for key in facets
        },
        "outcomes": [
            (o, outcome_counts.get(o, 0)) for o in OUTCOMES if outcome_counts.get(o) or o == chosen.outcome
        ],
        "rows": rows,
        "total": total,
        "samples": sum(cell.count for cell in cells),
        "pages": None if total is None else max(1, math.ceil(total / PAGE_SIZE)),
        "previous": chosen.page - 1 if chosen.page > 1 else None,
        "next": chosen.page + 1 if more else None,
    }


def _prompt_view(stored: str, chat: bool) -> dict[str, Any]:
    """The prompt as sent: chat messages one by one, or the completion text."""
    try:
        prompt = Prompt.from_stored(stored, chat)
    except (ValueError, KeyError, TypeError):  # not the JSON a chat run stores: shown as it is
        prompt = Prompt(stored, 0)
    messages = [{"role": role, "content": content} for role, content in prompt.messages or ()]
    return {"messages": messages, "text": None if messages else prompt.text}


def judge_round(entry: dict[str, Any]) -> dict[str, Any]:
    """One judge call as stored (kaoshi.runner.judge): the judge, its prompt, reply and parsed score."""
    return {
        "judge": entry.get("judge") or "",
        "status": entry.get("status") or "",
        "score": entry.get("score"),
        "points_awarded": entry.get("points_awarded"),
        "capped": bool(entry.get("capped")),
        "reply": entry.get("reply"),
        "error": entry.get("error"),
        "prompt": entry.get("prompt"),
    }


def grade_view(grade: GradeRecord, sample: SampleRecord, chosen: str | None) -> dict[str, Any]:
    return {
        "grader": grade.grader,
        "counts": grade.grader == chosen,  # the grader `kaoshi report` folds in
        "status": str(grade.status),
        "score": grade.score,
        "points": grade.points,
        "of_points": sample.points,
        "prompt_version": grade.prompt_version,
        "rounds": [judge_round(dict(entry)) for entry in grade.rounds],
    }


def _question_view(sample: SampleRecord) -> dict[str, Any]:
    content = sample.question
    options = [
        (str(o[0]), str(o[1]))
        for o in content.get("options") or ()
        if isinstance(o, (list, tuple)) and len(o) == 2
    ]
    return {
        "stem": str(content.get("stem", "")),
        "options": options,
        "explanation": str(content.get("explanation") or ""),
    }


def _sample_cell(sample: SampleRecord) -> dict[str, Any]:
    """One of a question's k samples, as its column on the sample page shows it."""
    return {
        "index": sample.sample + 1,
        "answer": "" if sample.answer is None else format_gold(sample.answer),
        "outcome": outcome(sample),
        "truncated": sample.truncated,
        "tokens_out": sample.tokens_out,
        "response": sample.response if sample.response is not None else sample.error or "",
        "reasoning": sample.reasoning,
    }


def sample_page(viewer: Viewer, name: str, question_id: str) -> dict[str, Any]:
    with reading(viewer.path) as db:
        spec = run_spec(db, name)
        if spec is None:
            raise NotFound(f"no run named {name!r} in {viewer.path}")
        sample = one_sample(db, viewer.path, name, question_id)
        if sample is None:
            raise NotFound(f"run {name!r} has no question {question_id!r}")
        grades = sample_grades(db, viewer.path, name, question_id)
        others = repeat_samples(db, viewer.path, name, question_id) if spec.repeats > 1 else []
        chosen = latest_grader(db, name)
        previous, following = neighbours(db, name, question_id)
    counted = {g.question_id: g for g in grades if g.grader == chosen}
    graded = apply_grades([sample], counted)[0]
    logprobs = sorted((sample.logprobs or {}).items(), key=lambda item: -item[1])
    return {
        "run": name,
        "spec": spec,
        "sample": sample,
        "outcome": outcome(graded),
        "score": graded.score,
        "gold": format_gold(sample.gold),
        "answer": "" if sample.answer is None else format_gold(sample.answer),
        "prompt": _prompt_view(sample.prompt, spec.chat),
        "question": _question_view(sample),
        "question_json": json.dumps(sample.question, ensure_ascii=False, indent=2, sort_keys=True),
        "grades": [grade_view(g, sample, chosen) for g in grades],
        "logprobs": logprobs,
        # a run of k samples a question: every sample, side by side (the first is the page's own)
        "k_samples": [_sample_cell(s) for s in ([sample, *others] if others else [])],
        "previous": previous,
        "next": following,
    }
