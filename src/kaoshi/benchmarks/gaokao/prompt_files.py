"""GAOKAO-Bench's prompt files: `Bench/Obj_Prompt.json` and `Bench/Sub_Prompt.json` say each data file's
question type and the instruction the bench sends before its items."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.data.errors import DataError
from kaoshi.data.model import QuestionType
from kaoshi.data.rawio import read_text

# How each objective GAOKAO-Bench type is asked and graded in kaoshi; every subjective one is judged (OPEN).
OBJECTIVE_TYPES = {
    "single_choice": QuestionType.SINGLE,
    "multi_choice": QuestionType.MULTI,  # physics multi-select: 6 full / 3 correct subset (the partial rule)
    "multi_question_choice": QuestionType.MULTI_QUESTION,
    "five_out_of_seven": QuestionType.MULTI_QUESTION,
}
SUBJECTIVE_TYPES = ("subjective", "correction", "cloze")


@dataclass(frozen=True)
class FilePrompt:
    """What the repository's Bench/*_Prompt.json says of one data file (by its keyword)."""

    gaokao_type: str
    prefix_prompt: str


def find_prompt_file(data_file: Path, name: str) -> Path | None:
    """The repository's Bench/<name> near a data file (the repository is three levels up at most)."""
    for parent in list(data_file.parents)[:4]:
        candidate = parent / "Bench" / name
        if candidate.is_file():
            return candidate
    return None


def read_prompt_file(path: Path) -> dict[str, FilePrompt]:
    """keyword -> type and prefix prompt, from Bench/Obj_Prompt.json or Sub_Prompt.json: `{"examples":
    [{"type", "keyword", "prefix_prompt", "comment"}]}`. The correction item's prefix is a list of two:
    the first asks for the corrected passage with the question, the second compares two passages in a step
    of the authors' pipeline that kaoshi does not run (the judge grades the corrected passage)."""
    try:
        value: Any = json.loads(read_text(path))
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path}: not JSON ({exc})") from None
    if isinstance(value, dict):
        lists = [v for v in value.values() if isinstance(v, list)]
        value = lists[0] if len(lists) == 1 else None
    if not isinstance(value, list):
        raise DataError(f"{path}: expected a list of prompt entries with type, keyword and prefix_prompt")
    prompts: dict[str, FilePrompt] = {}
    for number, entry in enumerate(value, start=1):
        fields = ("type", "keyword")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(f), str) for f in fields):
            raise DataError(f"{path}: entry {number} lacks one of {', '.join(fields)} (as text)")
        prefix = entry.get("prefix_prompt")
        if isinstance(prefix, list) and prefix and all(isinstance(p, str) for p in prefix):
            prefix = prefix[0]
        if not isinstance(prefix, str):
            raise DataError(f"{path}: entry {number}: prefix_prompt is not text (or a list of texts)")
        if entry["type"] not in (*OBJECTIVE_TYPES, *SUBJECTIVE_TYPES):
            known = ", ".join((*OBJECTIVE_TYPES, *SUBJECTIVE_TYPES))
            raise DataError(f"{path}: entry {number}: unknown type {entry['type']!r} (known: {known})")
        prompts[entry["keyword"]] = FilePrompt(entry["type"], prefix)
    return prompts
