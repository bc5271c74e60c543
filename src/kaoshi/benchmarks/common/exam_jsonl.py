"""kaoshi's own exam schema: one JSON object per line (docs/how-to/own-exam.md)."""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path
from typing import Any

from kaoshi.data.collect import (
    LoadResult,
    QuestionCollector,
    optional_text,
    require,
    require_id,
    require_text,
)
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.model import (
    MULTI_POLICY_NAMES,
    Exam,
    ExamSettings,
    Gold,
    Question,
    QuestionType,
    Source,
    parse_question_type,
)
from kaoshi.data.rawio import iter_jsonl, read_text
from kaoshi.qtypes import kind_of

QUESTION_FIELDS = frozenset(
    {
        "id",
        "type",
        "question",
        "options",
        "answer",
        "explanation",
        "points",
        "subject",
        "domain",
        "category",
        "split",
        "group",
        "original_letters",
        "meta",
    }
)
DEV_SPLIT = "dev"


def kaoshi_question(record: Any, file: str, line: int | None) -> Question:
    if not isinstance(record, dict):
        raise FieldError(None, f"expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - QUESTION_FIELDS)
    if unknown:
        raise FieldError(unknown[0], f"unknown field (known: {', '.join(sorted(QUESTION_FIELDS))})")
    question_id = require_id(record, "id")
    try:
        qtype = parse_question_type(require_text(record, "type"))
    except ValueError as exc:
        raise FieldError("type", str(exc)) from None
    options = _parse_options(record.get("options"), qtype)
    return Question(
        id=question_id,
        type=qtype,
        stem=require_text(record, "question").strip(),
        options=options,
        answer=_parse_answer(require(record, "answer"), qtype, options),
        explanation=optional_text(record, "explanation").strip(),
        points=_parse_points(record.get("points", 1)),
        subject=optional_text(record, "subject").strip() or None,
        domain=optional_text(record, "domain").strip() or None,
        category=optional_text(record, "category").strip() or None,
        split=optional_text(record, "split").strip() or "test",
        group=optional_text(record, "group").strip() or None,
        original_letters=_parse_original_letters(record.get("original_letters"), options),
        source=Source(file, line) if line is not None else None,
    )


def _parse_original_letters(value: Any, options: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """A shuffled question's original letter per option ("CADB" or ["C", "A", "D", "B"])."""
    if value in (None, "", []):
        return ()
    is_letters = isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value)
    )
    letters = tuple(value) if is_letters else None
    valid = tuple(letter for letter, _ in options)
    if letters is None or sorted(letters) != sorted(valid):
        raise FieldError(
            "original_letters", f"must be a permutation of the option letters {''.join(valid)}, got {value!r}"
        )
    return letters


def _parse_options(value: Any, qtype: QuestionType) -> tuple[tuple[str, str], ...]:
    if not qtype.is_choice:
        if value not in (None, {}, []):
            raise FieldError("options", f"{qtype.value} questions take no options")
        return ()
    if isinstance(value, list):
        pairs = [(chr(ord("A") + i), text) for i, text in enumerate(value)]
    elif isinstance(value, dict):
        pairs = list(value.items())
        expected = [chr(ord("A") + i) for i in range(len(pairs))]
        if len(pairs) <= 26 and [letter for letter, _ in pairs] != expected:
            raise FieldError("options", f"option letters must run {''.join(expected)} in order")
    elif value is None:
        raise FieldError("options", "missing required field for a choice question")
    else:
        raise FieldError("options", f"expected an object or a list, got {type(value).__name__}")
    if not 2 <= len(pairs) <= 26:
        raise FieldError("options", f"a choice question needs 2 to 26 options, got {len(pairs)}")
    for letter, text in pairs:
        if not isinstance(text, str) or not text.strip():
            raise FieldError("options", f"option {letter} must be non-empty text")
    return tuple((letter, text.strip()) for letter, text in pairs)


def _parse_answer(value: Any, qtype: QuestionType, options: tuple[tuple[str, str], ...]) -> Gold:

    gold = kind_of(qtype).parse_gold(value)
    if isinstance(gold, frozenset):
        valid = {letter for letter, _ in options}
        if not gold <= valid:
            bad = "".join(sorted(gold - valid))
            raise FieldError("answer", f"answer letter(s) {bad} not among options {''.join(sorted(valid))}")
    return gold


def _parse_points(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _is_finite(value) or value <= 0:
        raise FieldError("points", f"points must be a positive number, got {value!r}")
    return float(value)


def _is_finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer too large for a float
        return False


def load_kaoshi_jsonl(path: Path, split: str | None = None, benchmark: str = "kaoshi") -> LoadResult:
    """Load a kaoshi exam. Rows of split 'dev' form the few-shot pool; `split` picks the evaluated rows
    (default: every row that is not dev)."""
    text = read_text(path)
    file = str(path)
    collector = QuestionCollector(file)
    metadata: dict[str, Any] = {"benchmark": benchmark, "path": file}
    for item in iter_jsonl(path, text):
        if isinstance(item, RowError):
            collector.error(item)
            continue
        line, record = item
        if isinstance(record, dict) and "exam" in record and "id" not in record:
            _read_header(record["exam"], metadata, file, line, collector)
            continue
        collector.add(line, partial(kaoshi_question, record, file, line))
    questions = collector.questions
    fewshot = tuple(q for q in questions if q.split == DEV_SPLIT)
    if split is None:
        chosen = tuple(q for q in questions if q.split != DEV_SPLIT)
    else:
        chosen = tuple(q for q in questions if q.split == split)
        if not chosen and questions:
            splits = ", ".join(sorted({q.split or "" for q in questions}))
            raise DataError(f"{file}: no questions in split {split!r} (splits present: {splits})")
    name = str(metadata.get("name") or path.stem)
    metadata["split"] = split
    # The header stays in the metadata as the file has it (a derived file copies it); the multi-choice
    # policy and standard scores it sets are the exam's settings, which the run reads.
    policy, scores = metadata.get("multi_policy", "exact"), metadata.get("standard_scores", {})
    settings = ExamSettings(multi_policy=policy, standard_scores=scores)
    return LoadResult(Exam(name, chosen, fewshot, metadata, settings), tuple(collector.errors))


# Header keys that kaoshi sets itself: a header setting them would change what the exam is (a user exam
# recorded and prompted as C-Eval, another file's path, another split).
RESERVED_HEADER_KEYS = frozenset({"benchmark", "path", "split", "loaded_with", "positions"})


def _read_header(
    value: Any, metadata: dict[str, Any], file: str, line: int, collector: QuestionCollector
) -> None:
    if not isinstance(value, dict):
        collector.error(RowError(file, line, "exam", "the exam header must be an object"))
        return
    reserved = sorted(RESERVED_HEADER_KEYS & set(value))
    if reserved:
        collector.error(
            RowError(
                file,
                line,
                reserved[0],
                f"the exam header may not set {', '.join(reserved)}: kaoshi records these itself "
                "(give --benchmark and --split on the command line instead)",
            )
        )
        return
    scores = value.get("standard_scores", {})
    if not isinstance(scores, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and _is_finite(v) and v > 0
        for v in scores.values()
    ):
        collector.error(RowError(file, line, "standard_scores", "must map subject -> positive number"))
        return
    policy = value.get("multi_policy", "exact")
    if policy not in MULTI_POLICY_NAMES:
        known = ", ".join(MULTI_POLICY_NAMES)
        collector.error(RowError(file, line, "multi_policy", f"must be one of {known}, got {policy!r}"))
        return
    name = value.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        collector.error(RowError(file, line, "name", f"the exam name must be non-empty text, got {name!r}"))
        return
    metadata.update(value)
