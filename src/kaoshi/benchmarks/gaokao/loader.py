"""GAOKAO-Bench: `Data/Objective_Questions/*.json` and `Data/Subjective_Questions/*.json`, each file
`{"keywords": ..., "example": [records]}`, scored in points.

A record: `year`, `category` (the paper), `index`, `question` (options inside the text; a subjective item
may hold a list of parts, and a `passage` before them), the reference (`answer`, or `standard_answer` as
the subjective files write it: objective, a list with one entry per sub-question, or one letter-set string
such as "BC" for physics multi-select; subjective, the reference text), `analysis`, `score` (objective:
points per sub-question; subjective: the item's points).

The question type of a file is what the repository's `Bench/Obj_Prompt.json` / `Sub_Prompt.json` say for
its keyword, when those files sit beside the data (the repository root was given, or `Data/` inside
it). Without them it is read from the file name and the answers' shape: a physics file is multi-select,
a list of several answers is one letter per sub-question. Every item of the subjective folder is judged
(the prompt file's `subjective`, `correction` and fill-in `cloze`). Files that are not data (model
outputs such as `gemini-pro_….json` kept beside them) are skipped.

A choice item's options are A-D, as the bench offers them, their texts read out of the question; the
published text's flaws the loader reads through (an option's letter stuck to the text before it, options
that were pictures) are warnings that name their rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import TypeVar

from kaoshi.benchmarks.gaokao.prompt_files import (
    OBJECTIVE_TYPES,
    SUBJECTIVE_TYPES,
    FilePrompt,
    find_prompt_file,
    read_prompt_file,
)
from kaoshi.benchmarks.gaokao.subjects import GAOKAO_SUBJECTS, subject_of
from kaoshi.data.answers import parse_option_letters
from kaoshi.data.collect import LoadResult, QuestionCollector, optional_text
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.model import Exam, ExamSettings, Question, QuestionType, Source
from kaoshi.data.options import read_options
from kaoshi.data.quirks import QuirkLog
from kaoshi.data.rawio import iter_json_object_array, read_text, refuse_special_path
from kaoshi.qtypes.multi_question import parse_sub_answers

_Parsed = TypeVar("_Parsed")


OBJECTIVE_DIR, SUBJECTIVE_DIR = "Objective_Questions", "Subjective_Questions"
PROMPT_FILES = {OBJECTIVE_DIR: "Obj_Prompt.json", SUBJECTIVE_DIR: "Sub_Prompt.json"}
SINGLE_LETTERS = ("A", "B", "C", "D")
# How GAOKAO-Bench scores: each subject's points scale to its full marks, and a multiple-choice answer
# earns partial credit (the physics rule: a correct subset earns half).
GAOKAO_SETTINGS = ExamSettings(
    multi_policy="partial",
    standard_scores={subject: info.full_marks for subject, info in GAOKAO_SUBJECTS.items()},
)
# Data files are named for the years they cover: `2010-2022_Math_I_MCQs.json`.
_DATA_FILE = re.compile(r"^\d{4}-\d{4}_")


def gaokao_files(path: Path) -> list[tuple[Path, str]]:
    """(file, OBJECTIVE_DIR or SUBJECTIVE_DIR) for the repository root, `Data/`, one of its two folders or
    one data file."""
    refuse_special_path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    if path.is_file():
        folder = SUBJECTIVE_DIR if path.parent.name == SUBJECTIVE_DIR else OBJECTIVE_DIR
        return [(path, folder)]
    if path.name in PROMPT_FILES:
        return [(p, path.name) for p in sorted(path.glob("*.json")) if _DATA_FILE.match(p.name)]
    data = path / "Data" if (path / "Data").is_dir() else path
    found = [
        (p, folder)
        for folder in PROMPT_FILES
        for p in sorted((data / folder).glob("*.json"))
        if _DATA_FILE.match(p.name)
    ]
    if not found:
        raise DataError(
            f"{path}: no GAOKAO-Bench data (expected Data/{OBJECTIVE_DIR}/*.json and "
            f"Data/{SUBJECTIVE_DIR}/*.json under the repository root)"
        )
    return found


def infer_type(keyword: str, folder: str, answer: object) -> str:
    """The GAOKAO-Bench type of a record when no prompt file says it."""
    if folder == SUBJECTIVE_DIR:
        return "correction" if "Correction" in keyword else "subjective"
    if subject_of(keyword) == "Physics":
        return "multi_choice"
    if isinstance(answer, list) and len(answer) > 1:
        letters = "".join(str(a) for a in answer)
        return "five_out_of_seven" if any(ch in "EFG" for ch in letters) else "multi_question_choice"
    return "single_choice"


def _points(record: Mapping[str, object]) -> float:
    value = record.get("score")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FieldError("score", f"expected the points as a number, got {value!r}")
    if not value > 0 or value > 1000:
        raise FieldError("score", f"points must be between 0 and 1,000, got {value!r}")
    return float(value)


def _reference(record: Mapping[str, object]) -> tuple[str, object]:
    """(field, value) of the record's reference answer: `answer`, or `standard_answer` (subjective files)."""
    for name in ("answer", "standard_answer"):
        if record.get(name) is not None:
            return name, record[name]
    raise FieldError("answer", "missing required field (answer or standard_answer)")


def _text_answer(field: str, value: object) -> str:
    """A subjective record's reference answer: text, or a list of texts (one per part)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        value = "\n".join(v.strip() for v in value)
    if not isinstance(value, str) or not value.strip():
        raise FieldError(field, f"a subjective item needs its reference answer as text, got {value!r}")
    return value.strip()


def _parts(record: Mapping[str, object], name: str, *, required: bool, gaokao_type: str) -> str:
    """A text field as the bench sends it: each part stripped and ended by a newline (a subjective item's
    field may hold a list of parts; an objective item's is one text, which its options are read out of)."""
    value = record.get(name)
    if value is None and not required:
        return ""
    subjective = gaokao_type in SUBJECTIVE_TYPES
    parts: list[str] = []
    if isinstance(value, str):
        parts = [value]
    elif subjective and isinstance(value, list) and all(isinstance(part, str) for part in value):
        parts = list(value)
    if not "".join(parts).strip():
        wanted = "text (or a list of texts)" if subjective else "text"
        raise FieldError(name, f"expected {wanted}, got {value!r}")
    return "".join(f"{part.strip()}\n" for part in parts)


def sent_text(record: Mapping[str, object], gaokao_type: str) -> str:
    """What the bench sends after its prefix prompt (`Bench/bench_function.py`: `question.strip() + '\n'`
    for every type, the correction item's first request included); a subjective item's passage first and
    its parts one a line, for files that write them so."""
    subjective = gaokao_type in SUBJECTIVE_TYPES
    passage = _parts(record, "passage", required=False, gaokao_type=gaokao_type) if subjective else ""
    return passage + _parts(record, "question", required=True, gaokao_type=gaokao_type)


# Quirks of the published questions that the loader reads through (one warning each, with places).
GLUED_OPTION = (
    "have an option letter stuck to the text before it, without a line break or space ('…会增加C．给…', "
    "or a page number: '初现16C．'): read as the start of that option"
)
NO_OPTION_TEXT = (
    "have options whose text is not in the question (pictures: 'A．  B．'): answered by letter, A-D as "
    "the official prompt offers them"
)


def _choice_options(text: str) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Stem, options A-D and the quirks met, read out of the question text. The bench offers A-D and reads
    the last of them in the reply, so a text that does not split into exactly those gets A-D bare (the
    question is always shown as written, options inside)."""
    found = read_options(text)
    if tuple(letter for letter, _ in found.options) != SINGLE_LETTERS:
        return text.strip(), tuple((letter, "") for letter in SINGLE_LETTERS), (NO_OPTION_TEXT,)
    quirks: tuple[str, ...] = (GLUED_OPTION,) if found.glued else ()
    if not all(body for _, body in found.options):
        quirks += (NO_OPTION_TEXT,)
    return found.stem, found.options, quirks


def _with_field(field: str, parse: Callable[[object], _Parsed], value: object) -> _Parsed:
    """A gold-answer parser's result, its errors naming the field the record used."""
    try:
        return parse(value)
    except FieldError as exc:
        raise FieldError(field, exc.reason) from None


def gaokao_question(
    record: Mapping[str, object],
    keyword: str,
    folder: str,
    prompt: FilePrompt | None,
    file: str,
    line: int,
    quirks: QuirkLog | None = None,
) -> Question:
    """One GAOKAO-Bench record as a Question with id '{keyword}/{index}'; the quirks it has are noted in
    `quirks` once it is read."""
    raw = dict(record)
    index = raw.get("index")
    if isinstance(index, bool) or not isinstance(index, (int, str)) or not str(index).strip():
        raise FieldError("index", f"expected the item's index (a number), got {index!r}")
    field, answer = _reference(raw)
    gaokao_type = prompt.gaokao_type if prompt is not None else infer_type(keyword, folder, answer)
    subjective = folder == SUBJECTIVE_DIR
    if not subjective and gaokao_type not in OBJECTIVE_TYPES:
        raise FieldError(None, f"a {gaokao_type} item is judged, so it belongs in {SUBJECTIVE_DIR}")
    qtype = QuestionType.OPEN if subjective else OBJECTIVE_TYPES[gaokao_type]
    text = sent_text(raw, gaokao_type)
    points = _points(raw)
    options: tuple[tuple[str, str], ...] = ()
    stem = text.strip()
    gold: frozenset[str] | str
    found: tuple[str, ...] = ()
    if qtype is QuestionType.OPEN:
        gold = _text_answer(field, answer)
    elif qtype is QuestionType.MULTI_QUESTION:
        gold = _with_field(field, parse_sub_answers, answer)
        points *= len(gold)  # `score` is per sub-question
    else:
        if not isinstance(answer, list) or len(answer) != 1:
            raise FieldError(field, f"a {gaokao_type} item has one answer in a list, got {answer!r}")
        gold = _with_field(
            field, partial(parse_option_letters, exactly_one=qtype is QuestionType.SINGLE), answer[0]
        )
        stem, options, found = _choice_options(text)
        letters = "".join(letter for letter, _ in options)
        if not gold <= set(letters):
            raise FieldError(field, f"answer {answer!r} is not among the options {letters}")
    subject = subject_of(keyword) or keyword
    verbatim = [("question", text), ("gaokao_type", gaokao_type), ("keyword", keyword)]
    if prompt is not None:
        verbatim.append(("prefix_prompt", prompt.prefix_prompt))
    for name in ("year", "category"):
        verbatim.append((name, optional_text(raw, name)))
    if quirks is not None:
        for description in found:
            quirks.note(description, file, line)
    return Question(
        id=f"{keyword}/{str(index).strip()}",
        type=qtype,
        stem=stem,
        options=options,
        answer=gold,
        explanation=optional_text(raw, "analysis").strip(),
        points=points,
        subject=subject,
        domain=keyword,
        split="test",
        source=Source(file, line),
        verbatim=tuple(verbatim),
    )


def load_gaokao(path: Path, *, subjects: Iterable[str] | None = None) -> LoadResult:
    """GAOKAO-Bench from the repository root, `Data/`, one of its folders or one data file."""
    wanted = set(subjects) if subjects else None
    errors: list[RowError] = []
    warnings: list[str] = []
    questions: list[Question] = []
    prompt_tables: dict[Path, dict[str, FilePrompt]] = {}
    no_prompts: set[str] = set()
    quirks = QuirkLog()
    for file, folder in gaokao_files(path):
        keyword = file.stem
        subject = subject_of(keyword)
        if subject is None:
            warnings.append(f"{file}: no GAOKAO subject in the file name; its items count under {keyword!r}")
        if wanted is not None and (subject or keyword) not in wanted:
            continue
        prompt_file = find_prompt_file(file, PROMPT_FILES[folder])
        prompt = None
        if prompt_file is None:
            no_prompts.add(PROMPT_FILES[folder])
        else:
            if prompt_file not in prompt_tables:
                prompt_tables[prompt_file] = read_prompt_file(prompt_file)
            prompt = prompt_tables[prompt_file].get(keyword)
            if prompt is None:
                warnings.append(f"{prompt_file}: no entry for {keyword!r}; its type is read from the data")
        _read_file(file, folder, keyword, prompt, questions, errors, quirks)
    warnings.extend(quirks.warnings())
    if no_prompts:
        warnings.append(
            f"no Bench/{' or '.join(sorted(no_prompts))} beside the data: question types were read from the "
            "file names and answers, and the official prompts are not available (pass the repository root "
            "for them, or use --prompt gaokao-kaoshi)"
        )
    if wanted is not None and not questions and not errors:
        known = ", ".join(GAOKAO_SUBJECTS)
        raise DataError(f"{path}: no items of subject(s) {', '.join(sorted(wanted))} (subjects: {known})")
    metadata = {"benchmark": "gaokao-bench", "path": str(path), "split": "test"}
    exam = Exam("gaokao-bench", tuple(questions), (), metadata, GAOKAO_SETTINGS)
    return LoadResult(exam, tuple(errors), (), tuple(warnings))


def _read_file(
    file: Path,
    folder: str,
    keyword: str,
    prompt: FilePrompt | None,
    questions: list[Question],
    errors: list[RowError],
    quirks: QuirkLog,
) -> None:
    collector = QuestionCollector(str(file))
    try:
        rows = list(iter_json_object_array(file, read_text(file), "example"))
    except DataError as exc:
        errors.extend(exc.errors or (RowError(str(file), None, None, str(exc)),))
        return
    for item in rows:
        if isinstance(item, RowError):
            collector.error(item)
            continue
        line, record = item
        if not isinstance(record, dict):
            collector.error(
                RowError(str(file), line, None, f"expected an object, got {type(record).__name__}")
            )
            continue
        collector.add(
            line, partial(gaokao_question, record, keyword, folder, prompt, str(file), line, quirks)
        )
    questions.extend(collector.questions)
    errors.extend(collector.errors)
