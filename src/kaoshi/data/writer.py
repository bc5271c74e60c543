"""Writing exams in kaoshi's JSONL schema (shuffled variants, train/test splits): what the loader reads."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kaoshi.data.model import Exam, Question, format_gold


def question_record(question: Question) -> dict[str, Any]:
    """The question as one kaoshi JSONL object (optional fields only when set)."""
    record: dict[str, Any] = {"id": question.id, "type": question.type.value, "question": question.stem}
    if question.options:
        record["options"] = dict(question.options)
    record["answer"] = None if question.answer is None else format_gold(question.answer)
    optional = {
        "explanation": question.explanation,
        "subject": question.subject,
        "domain": question.domain,
        "category": question.category,
        "split": question.split,
        "group": question.group,
        "original_letters": "".join(question.original_letters),
    }
    record["points"] = int(question.points) if question.points.is_integer() else question.points
    record.update((key, value) for key, value in optional.items() if value)
    return record


HEADER_KEYS = ("name", "description", "standard_scores")


def exam_header(exam: Exam) -> dict[str, Any]:
    """What a derived exam file (shuffled, split) carries over from its source: its header's name and
    description, and the settings its runs are scored by (a kaoshi JSONL header's, or GAOKAO-Bench's
    partial credit and full marks), which the header of a kaoshi JSONL file sets."""
    header = {k: v for k, v in exam.metadata.items() if k in HEADER_KEYS}
    if exam.settings.multi_policy != "exact":
        header["multi_policy"] = exam.settings.multi_policy
    if exam.settings.standard_scores:
        header["standard_scores"] = dict(exam.settings.standard_scores)
    return header


def write_exam(path: Path, questions: Iterable[Question], header: Mapping[str, Any] | None = None) -> int:
    """Write the questions (after an `{"exam": header}` line, when given) atomically; returns the count."""
    lines = [json.dumps({"exam": dict(header)}, ensure_ascii=False)] if header else []
    lines += [json.dumps(question_record(q), ensure_ascii=False) for q in questions]
    count = len(lines) - bool(header)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return count
