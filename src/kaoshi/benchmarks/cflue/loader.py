"""CFLUE's knowledge part: `data/knowledge/knowledge.json`, a JSON array of finance qualification exam
questions.

Each record: `名称` (the exam, kept as the subject), `task` (单项选择题 / 多项选择题 / 判断题, kept as the
domain so reports and the leaderboard show each task), `question`, `choices`, `answer` (letters),
`analysis` (the explanation).

`choices` is a string holding a Python dict literal, `"{'A': '…', 'B': '…'}"`. It is parsed as a literal
only (`ast.literal_eval`, never `eval`): anything that is not a dict of option letter -> text is refused
with a field error before any of it is evaluated.

判断题 have the choices A=对, B=错 and a letter answer. They are kept as two-option single-choice questions
answered with a letter, not as kaoshi's true/false type, so a reply and its grade stay in CFLUE's terms
(the same letters its answers and its own scoring use); a 判断题 without choices gets A=对, B=错.

CFLUE's records have no id: a question's id is its index in the array ("0" is the first record).
"""

from __future__ import annotations

import ast
import json
import math
import warnings
from functools import partial
from pathlib import Path
from typing import Any

from kaoshi.data.answers import parse_option_letters, require_among_options
from kaoshi.data.collect import LoadResult, QuestionCollector, optional_text, require_text
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.model import Exam, Question, QuestionType, Source
from kaoshi.data.rawio import iter_json_array, read_text

CFLUE_FILE = "knowledge.json"
CFLUE_FOLDERS = ("data/knowledge", "knowledge", ".")  # under the repository, the data/ folder, itself
JUDGE_TASK = "判断题"
CFLUE_TASKS = {
    "单项选择题": QuestionType.SINGLE,
    "多项选择题": QuestionType.MULTI,
    JUDGE_TASK: QuestionType.SINGLE,
}
JUDGE_CHOICES: tuple[tuple[str, str], ...] = (("A", "对"), ("B", "错"))
# The fields only CFLUE's records have together (QualBench's are idx / question_type / question).
CFLUE_KEYS = frozenset({"名称", "task", "choices"})
_DICT_EXAMPLE = "{'A': '…', 'B': '…'}"


def parse_choices(value: object) -> tuple[tuple[str, str], ...]:
    """The options of a `choices` field: a Python dict literal of letter -> text (or an already decoded
    JSON object), letters A, B, C, … without gaps, in letter order."""
    if isinstance(value, str):
        mapping = _literal_dict(value)
    elif isinstance(value, dict):
        mapping = value
    else:
        raise FieldError(
            "choices", f"expected a dict literal such as {_DICT_EXAMPLE}, got {type(value).__name__}"
        )
    options: dict[str, str] = {}
    for key, text in mapping.items():
        if not isinstance(key, str) or len(key.strip()) != 1 or not "A" <= key.strip() <= "Z":
            raise FieldError("choices", f"key {key!r} is not an option letter A-Z")
        options[key.strip()] = _option_text(key.strip(), text)
    letters = sorted(options)
    expected = [chr(ord("A") + i) for i in range(len(letters))]
    if len(letters) < 2 or letters != expected:
        raise FieldError(
            "choices", f"options {''.join(letters) or '(none)'}: expected letters A, B, … without gaps"
        )
    return tuple((letter, options[letter]) for letter in letters)


def parse_literal(text: str) -> ast.Expression:
    """The syntax tree of a Python expression (ast.parse in eval mode), without the warning an unknown escape
    such as '\\B' in an option's text gives: Python keeps the backslash as written, as the official code's
    eval reads it, and the warning would only tell the user so."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.11
        warnings.simplefilter("ignore", SyntaxWarning)  # Python 3.12 on
        return ast.parse(text, mode="eval")


def _literal_dict(text: str) -> dict[Any, Any]:
    """The dict a dict literal spells; its syntax tree is checked first, so nothing else is evaluated."""
    try:
        tree = parse_literal(text.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        reason = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise FieldError("choices", f"not a Python dict literal such as {_DICT_EXAMPLE}: {reason}") from None
    if not isinstance(tree.body, ast.Dict):
        what = type(tree.body).__name__
        raise FieldError(
            "choices", f"expected a dict literal such as {_DICT_EXAMPLE}, got a {what} expression"
        )
    try:
        value = ast.literal_eval(tree.body)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
        raise FieldError("choices", f"the dict holds something other than literals: {exc}") from None
    assert isinstance(value, dict)
    if len(value) != len(tree.body.keys):  # a literal keeps the last of a repeated key, silently
        raise FieldError("choices", "the dict literal repeats a key")
    return value


def _option_text(letter: str, text: object) -> str:
    # A number is kept as written: an option may be an amount ({'A': 100, 'B': 200}).
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise FieldError("choices", f"option {letter} is {type(text).__name__}, not text")
    if isinstance(text, float) and not math.isfinite(text):
        raise FieldError("choices", f"option {letter} is the number {text!r}, not text")
    if not str(text).strip():
        raise FieldError("choices", f"option {letter} is empty")
    return str(text).strip()


def cflue_question(record: Any, index: int, file: str, line: int | None) -> Question:
    """One CFLUE record (array index `index`) as a Question; FieldError on bad input."""
    if not isinstance(record, dict):
        raise FieldError(None, f"expected a JSON object, got {type(record).__name__}")
    task = require_text(record, "task").strip()
    qtype = CFLUE_TASKS.get(task)
    if qtype is None:
        raise FieldError("task", f"unknown task {task!r} (CFLUE has {', '.join(CFLUE_TASKS)})")
    stem = require_text(record, "question")
    raw_choices = record.get("choices")
    if raw_choices is None or (isinstance(raw_choices, str) and not raw_choices.strip()):
        if task != JUDGE_TASK:
            raise FieldError("choices", "missing required field")
        options = JUDGE_CHOICES
    else:
        options = parse_choices(raw_choices)
    raw_answer = record.get("answer")
    if raw_answer is None or (isinstance(raw_answer, str) and not raw_answer.strip()):
        raise FieldError("answer", "missing required field")
    answer = parse_option_letters(raw_answer, exactly_one=qtype is QuestionType.SINGLE)
    require_among_options(answer, options, raw_answer)
    return Question(
        id=str(index),
        type=qtype,
        stem=stem.strip(),
        options=options,
        answer=answer,
        explanation=optional_text(record, "analysis").strip(),
        subject=optional_text(record, "名称").strip() or None,
        domain=task,
        split="test",
        source=Source(file, line) if line is not None else None,
        verbatim=(
            ("question", stem),
            ("choices", str(raw_choices) if raw_choices is not None else ""),
            ("answer", str(raw_answer)),
            ("explanation", optional_text(record, "analysis")),
        ),
    )


def locate_cflue(path: Path) -> Path:
    """knowledge.json: `path` itself, or under the repository (data/knowledge/) or its data/ folder."""
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.is_file():
        return path
    for folder in CFLUE_FOLDERS:
        candidate = path / folder / CFLUE_FILE
        if candidate.is_file():
            return candidate
    raise DataError(f"{path}: no data/knowledge/{CFLUE_FILE} here (CFLUE's knowledge part)")


def load_cflue(path: Path) -> LoadResult:
    """CFLUE's knowledge questions from the repository, its data/ folder, or knowledge.json itself."""
    file_path = locate_cflue(path)
    file = str(file_path)
    collector = QuestionCollector(file)
    for index, item in enumerate(iter_json_array(file_path, read_text(file_path))):
        if isinstance(item, RowError):
            collector.error(item)
            continue
        line, record = item
        collector.add(line, partial(cflue_question, record, index, file, line))
    exam = Exam(
        "cflue", tuple(collector.questions), metadata={"benchmark": "cflue", "path": file, "split": "test"}
    )
    return LoadResult(exam, tuple(collector.errors))


def holds_cflue(path: Path) -> bool:
    """A JSON array whose first record has CFLUE's fields (名称, task, choices), or a folder holding one
    where CFLUE keeps it."""
    if path.is_dir():
        candidates = [path / folder / CFLUE_FILE for folder in CFLUE_FOLDERS]
        return any(candidate.is_file() and holds_cflue(candidate) for candidate in candidates)
    if path.suffix.lower() != ".json":
        return False
    try:
        first = _first_record(read_text(path))
    except DataError:
        return False
    return isinstance(first, dict) and set(first) >= CFLUE_KEYS


def _first_record(text: str) -> object:
    """The first element of a JSON array, decoding nothing after it (None: not an array, or empty)."""
    start = text.lstrip()
    if not start.startswith("["):
        return None
    body = start[1:].lstrip()
    if not body or body.startswith("]"):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body)
    except (ValueError, RecursionError):
        return None
    return value
