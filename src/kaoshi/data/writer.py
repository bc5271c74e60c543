"""Writing exams in kaoshi's JSONL schema (shuffled variants, train/test splits): what the loader reads."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kaoshi.data.model import Question, format_gold


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


def exam_header(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What a derived exam file (shuffled, split) carries over from its source's header."""
    return {k: v for k, v in metadata.items() if k in HEADER_KEYS}


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
