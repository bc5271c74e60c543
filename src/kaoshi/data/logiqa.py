"""LogiQA (Chinese): `zh_train.txt`, `zh_eval.txt`, `zh_test.txt`, eight lines per question.

A record: a blank line, the answer (a-d), the context, the question, then four option lines whose letter
prefix is written 'A.', 'A．', 'A ' and, in the released files, also 'A，' or in lower case ('d.'). Records
are read as the blocks between blank lines, so one short record does not shift every record after it;
errors name the record's first line (its blank line; the answer line for a file that starts without one).
The context becomes the passage before the question: the stem is context + newline + question.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from kaoshi.data.collect import LoadResult, QuestionCollector
from kaoshi.data.errors import DataError, FieldError
from kaoshi.data.model import Exam, Question, QuestionType, Source
from kaoshi.data.options import normalize_letter
from kaoshi.data.rawio import read_text

LOGIQA_SPLITS = ("train", "eval", "test")
LOGIQA_SPLIT = "test"
OPTION_LETTERS = ("A", "B", "C", "D")
RECORD_LINES = 7  # after the blank line: answer, context, question, four options
# A letter (any case, half- or full-width), then '.', '．', '，', ',', '、', ':', '：' or a space.
_OPTION_PREFIX = re.compile(r"^([A-Da-dＡ-Ｄａ-ｄ])(?:[.．，,、:：]|[ \t\u3000])[ \t\u3000]*")


def split_file(split: str) -> str:
    return f"zh_{split}.txt"


@dataclass(frozen=True)
class Record:
    """A record's lines as read: where it starts (its blank line) and (line number, text) per line."""

    first_line: int
    lines: tuple[tuple[int, str], ...]


def iter_records(text: str) -> Iterator[Record]:
    """The blocks of non-blank lines, each with the number of the blank line before it."""
    first_line = 1
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if not lines and number > 1:
                first_line = number - 1
            elif not lines:
                first_line = number
            lines.append((number, line))
        elif lines:
            yield Record(first_line, tuple(lines))
            lines = []
    if lines:
        yield Record(first_line, tuple(lines))


def logiqa_question(record: Record, index: int, split: str, file: str) -> Question:
    """One record as a single-choice Question '{split}/{index}'; FieldError naming the bad field."""
    if len(record.lines) != RECORD_LINES:
        last = record.lines[-1][0]
        raise FieldError(
            None,
            f"a record has {RECORD_LINES} lines after its blank line (answer, context, question, four "
            f"options); this one has {len(record.lines)} (lines {record.lines[0][0]}-{last})",
        )
    (_, answer), (_, context), (_, question), *option_lines = record.lines
    letter = answer.strip()
    if len(letter) != 1 or normalize_letter(letter) not in OPTION_LETTERS:
        raise FieldError("answer", f"answer {answer.strip()!r} is not one of a, b, c, d")
    options = tuple(
        _option(expected, number, line)
        for expected, (number, line) in zip(OPTION_LETTERS, option_lines, strict=True)
    )
    return Question(
        id=f"{split}/{index}",
        type=QuestionType.SINGLE,
        stem=f"{context.strip()}\n{question.strip()}",
        options=options,
        answer=frozenset(normalize_letter(letter)),
        split=split,
        source=Source(file, record.first_line),
        verbatim=(("context", context), ("question", question), ("answer", answer)),
    )


def _option(expected: str, number: int, line: str) -> tuple[str, str]:
    text = line.strip()
    match = _OPTION_PREFIX.match(text)
    if match is None or normalize_letter(match.group(1)) != expected:
        raise FieldError(
            f"option {expected}",
            f"line {number} {text[:30]!r} does not start with '{expected}.', '{expected}．' or '{expected} '",
        )
    body = text[match.end() :].strip()
    if not body:
        raise FieldError(f"option {expected}", f"line {number}: option {expected} is empty")
    return expected, body


def read_logiqa_file(path: Path, split: str) -> QuestionCollector:
    """Every record of one file, the bad ones as row errors."""
    collector = QuestionCollector(str(path))
    for index, record in enumerate(iter_records(read_text(path))):
        collector.add(record.first_line, partial(logiqa_question, record, index, split, str(path)))
    return collector


def split_of(path: Path) -> str | None:
    """'test' for zh_test.txt; None for a file named otherwise."""
    name = path.name.lower()
    return next((s for s in LOGIQA_SPLITS if name == split_file(s)), None)


def load_logiqa(path: Path, split: str | None = None) -> LoadResult:
    """One split of a LogiQA folder, or one file; a folder's train split is the few-shot pool."""
    if split is not None and split not in LOGIQA_SPLITS:
        raise DataError(f"LogiQA splits are {', '.join(LOGIQA_SPLITS)}, got {split!r}")
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    pool: list[Question] = []
    if path.is_dir():
        chosen = split or LOGIQA_SPLIT
        file = path / split_file(chosen)
        if not file.is_file():
            raise DataError(f"{path}: no {split_file(chosen)} (a LogiQA folder has zh_train/eval/test.txt)")
        train = path / split_file("train")
        if chosen != "train" and train.is_file():
            pool = read_logiqa_file(train, "train").questions
    else:
        file, named = path, split_of(path)
        if split is not None and named is not None and split != named:
            raise DataError(f"{path} is the {named} split; --split {split} asks for another")
        chosen = named or split or LOGIQA_SPLIT
    collector = read_logiqa_file(file, chosen)
    metadata = {"benchmark": "logiqa", "path": str(path), "split": chosen}
    exam = Exam("logiqa", tuple(collector.questions), tuple(pool), metadata)
    return LoadResult(exam, tuple(collector.errors))


def looks_like_logiqa(path: Path) -> bool:
    """A .txt file whose first record has LogiQA's shape (an answer letter a-d, two text lines, and four
    lines starting A, B, C, D), or a folder with such a zh_train/eval/test.txt."""
    if path.is_dir():
        return any(looks_like_logiqa(path / split_file(split)) for split in LOGIQA_SPLITS)
    if path.suffix.lower() != ".txt" or not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8-sig", errors="replace") as handle:
            head = handle.read(64 * 1024)
    except OSError:
        return False
    first = next(iter_records(head.replace("\r\n", "\n").replace("\r", "\n")), None)
    if first is None or len(first.lines) != RECORD_LINES:
        return False
    try:
        logiqa_question(first, 0, LOGIQA_SPLIT, str(path))
    except FieldError:
        return False
    return True
