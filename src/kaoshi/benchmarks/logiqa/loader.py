"""LogiQA (Chinese): `zh_train.txt`, `zh_eval.txt`, `zh_test.txt`, eight lines per question.

A record: a blank line, the answer (a-d), the context, the question, then four option lines whose letter
prefix is written 'A.', 'A．', 'A ' and, in the released files, also 'A，', 'B。' or in lower case ('d.').
In 19 records of the released zh_test.txt the option lines come in the order A, C, B, D; the answer key
follows the printed letters (in each the answer is right only by its printed letter, and AGIEval's copy of
the same questions keeps those letters), so options are read by their printed letter whatever their order,
and the loader says which records were out of order. Records
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
from kaoshi.data.quirks import QuirkLog
from kaoshi.data.rawio import present, read_opening, read_text, refuse_special_path, text_problem

LOGIQA_SPLITS = ("train", "eval", "test")
LOGIQA_SPLIT = "test"
OPTION_LETTERS = ("A", "B", "C", "D")
RECORD_LINES = 7  # after the blank line: answer, context, question, four options
# A letter (any case, half- or full-width), then '.', '．', '，', ',', '、', ':', '：' or a space.
_OPTION_PREFIX = re.compile(r"^([A-Da-dＡ-Ｄａ-ｄ])(?:[.．，,、:：。]|[ \t\u3000])[ \t\u3000]*")
_FIELDS = ("answer", "context", "question", *(f"option {letter}" for letter in OPTION_LETTERS))
OUT_OF_ORDER = "list their options out of letter order (read by the printed letters, as the answer key is)"


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
    for (number, text), field in zip(record.lines, _FIELDS, strict=True):
        problem = text_problem(text)  # the limit the JSON and CSV loaders apply to a field
        if problem is not None:
            raise FieldError(field, f"line {number}: {problem}")
    (_, answer), (_, context), (_, question), *option_lines = record.lines
    letter = answer.strip()
    if len(letter) != 1 or normalize_letter(letter) not in OPTION_LETTERS:
        raise FieldError("answer", f"answer {answer.strip()!r} is not one of a, b, c, d")
    options = _options(option_lines)
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


def _options(option_lines: list[tuple[int, str]]) -> tuple[tuple[str, str], ...]:
    """The four options by printed letter, in letter order: lines printed A, C, B, D give the options A-D."""
    matches = [_OPTION_PREFIX.match(line.strip()) for _, line in option_lines]
    printed = [normalize_letter(m.group(1)) if m is not None else "" for m in matches]
    by_printed_letter = sorted(printed) == list(OPTION_LETTERS)
    options = []
    for (number, line), match, position_letter in zip(option_lines, matches, OPTION_LETTERS, strict=True):
        text = line.strip()
        letter = (
            normalize_letter(match.group(1)) if match is not None and by_printed_letter else position_letter
        )
        if match is None or normalize_letter(match.group(1)) != letter:
            raise FieldError(
                f"option {letter}",
                f"line {number} {text[:30]!r} does not start with '{letter}.', '{letter}．' or '{letter} '",
            )
        body = text[match.end() :].strip()
        if not body:
            raise FieldError(f"option {letter}", f"line {number}: option {letter} is empty")
        options.append((letter, body))
    return tuple(sorted(options))


def printed_order(record: Record) -> str:
    """The option letters as a record prints them ('ACBD'), '' where a line has no letter."""
    matches = [_OPTION_PREFIX.match(line.strip()) for _, line in record.lines[3:]]
    return "".join(normalize_letter(m.group(1)) for m in matches if m is not None)


def read_logiqa_file(path: Path, split: str, quirks: QuirkLog) -> QuestionCollector:
    """Every record of one file, the bad ones as row errors, the out-of-order ones noted in `quirks`."""
    collector = QuestionCollector(str(path))
    for index, record in enumerate(iter_records(read_text(path))):
        read = collector.add(record.first_line, partial(logiqa_question, record, index, split, str(path)))
        if read is not None and printed_order(record) != "".join(OPTION_LETTERS):
            quirks.note(OUT_OF_ORDER, str(path), record.first_line)
    return collector


def split_of(path: Path) -> str | None:
    """'test' for zh_test.txt; None for a file named otherwise."""
    name = path.name.lower()
    return next((s for s in LOGIQA_SPLITS if name == split_file(s)), None)


def load_logiqa(path: Path, split: str | None = None) -> LoadResult:
    """One split of a LogiQA folder, or one file; a folder's train split is the few-shot pool."""
    if split is not None and split not in LOGIQA_SPLITS:
        raise DataError(f"LogiQA splits are {', '.join(LOGIQA_SPLITS)}, got {split!r}")
    refuse_special_path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file or directory")
    pool: list[Question] = []
    quirks = QuirkLog()
    if path.is_dir():
        chosen = split or LOGIQA_SPLIT
        file = path / split_file(chosen)
        if not present(file):
            raise DataError(f"{path}: no {split_file(chosen)} (a LogiQA folder has zh_train/eval/test.txt)")
        train = path / split_file("train")
        if chosen != "train" and present(train):
            pool = read_logiqa_file(train, "train", quirks).questions
    else:
        file, named = path, split_of(path)
        if split is not None and named is not None and split != named:
            raise DataError(f"{path} is the {named} split; --split {split} asks for another")
        chosen = named or split or LOGIQA_SPLIT
    collector = read_logiqa_file(file, chosen, quirks)
    metadata = {"benchmark": "logiqa", "path": str(path), "split": chosen}
    exam = Exam("logiqa", tuple(collector.questions), tuple(pool), metadata)
    return LoadResult(exam, tuple(collector.errors), (), quirks.warnings())


def looks_like_logiqa(path: Path) -> bool:
    """A .txt file whose first record has LogiQA's shape (an answer letter a-d, two text lines, and four
    lines starting A, B, C, D), or a folder with such a zh_train/eval/test.txt."""
    if path.is_dir():
        return any(looks_like_logiqa(path / split_file(split)) for split in LOGIQA_SPLITS)
    opening = read_opening(path, 64 * 1024) if path.suffix.lower() == ".txt" else None
    if opening is None:
        return False
    head = opening.decode("utf-8-sig", errors="replace")
    first = next(iter_records(head.replace("\r\n", "\n").replace("\r", "\n")), None)
    if first is None or len(first.lines) != RECORD_LINES:
        return False
    try:
        logiqa_question(first, 0, LOGIQA_SPLIT, str(path))
    except FieldError:
        return False
    return True
