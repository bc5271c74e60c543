"""Pairing runs question by question: the same id holding the same question in every run.

An id alone is not a question: C-Eval's dev and val splits both have `law/0`, and a corrected data file
keeps its ids. Every comparison between runs (report, leaderboard, compare, vote, contamination) pairs
through `pair_questions`, which pairs an id only where its content fingerprint agrees across runs.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, repeat
from typing import Any, Generic, Protocol, TypeVar

from kaoshi.bulk import collection_paused
from kaoshi.data.model import Gold
from kaoshi.store.records import SampleRecord, SampleStatus

QuestionKey = tuple[str, str]  # (question id, content fingerprint)
# What pairing and coverage read of a sample from the store (store.columns.pair_keys): (question id,
# content fingerprint, status as stored, correct 0 / 1 / None, score with its grader's points folded in).
# Plain tuples as SQLite makes them, read by place: a board reads a million, and a named tuple a row cost
# a fifth of the read.
KeyRow = tuple[str, str, str, int | None, float | None]
# A key row going on with the answer read and the gold as stored JSON, and the question type: what tells
# two runs' answers to a question apart (store.columns.answer_keys; the viewer's compare page).
AnswerRow = tuple[str, str, str, int | None, float | None, str | None, str | None, str]


class Answered(Protocol):
    """What pairing reads of a sample: a SampleRecord, or the row a summary reads (store.columns)."""

    @property
    def question_id(self) -> str: ...

    @property
    def status(self) -> str: ...  # a SampleStatus, or its stored text

    @property
    def correct(self) -> int | None: ...  # a bool, or its stored 0 / 1

    @property
    def score(self) -> float | None: ...


Item = TypeVar("Item", bound=Answered)


def _squash(text: str) -> str:
    return "".join(text.split())


def _gold_content(gold: Gold, option_texts: Mapping[str, str]) -> Any:
    """The gold answer by content: chosen letters become their option texts, so it survives shuffling."""
    if isinstance(gold, frozenset):
        return sorted(option_texts.get(letter, letter) for letter in gold)
    if isinstance(gold, str):
        return _squash(gold)
    return gold  # True / False / None (no published answer)


def question_fingerprint(sample: SampleRecord) -> str:
    """The content of the question a sample answers: type, stem, option texts and gold.

    Independent of the id, of whitespace and of the order the options were shown in (the gold is taken
    by option text), so a shuffled-options run of a question (`--shuffle-options`, a file shuffled
    elsewhere) has its original's fingerprint, while the same id on another split or data version has
    another. Stored beside each sample as it is written (kaoshi.store.columns reads it back)."""
    return fingerprint_of_content(sample.qtype, sample.question, sample.gold)


# json.dumps(value, ensure_ascii=False), the text every fingerprint was made from, with its encoder made
# once: dumps builds one a call (a sixth of the time a fingerprint took; each answer stored makes one).
_FINGERPRINT_JSON = json.JSONEncoder(ensure_ascii=False)


def fingerprint_of_content(qtype: str, content: Mapping[str, Any], gold: Gold) -> str:
    """question_fingerprint of a question's type, content (its stored JSON) and gold answer."""
    options = {str(letter): _squash(str(text)) for letter, text in content.get("options", ())}
    value = [
        qtype,
        _squash(str(content.get("stem", ""))),
        sorted(options.values()),
        _gold_content(gold, options),
    ]
    return hashlib.sha256(_FINGERPRINT_JSON.encode(value).encode()).hexdigest()


def content_fingerprint(item: Answered) -> str:
    """An item's question fingerprint: the one it carries (store.columns.ScoreRow), else computed from the
    sample's question."""
    carried = getattr(item, "fingerprint", None)
    if isinstance(carried, str):
        return carried
    assert isinstance(item, SampleRecord)
    return question_fingerprint(item)


def question_key(sample: Answered) -> QuestionKey:
    return sample.question_id, content_fingerprint(sample)


def answered(sample: Answered) -> bool:
    """The model gave an output (it may still be unreadable); errors are no answer."""
    return sample.status != SampleStatus.ERROR


def graded(sample: Answered) -> bool:
    """Answered and marked right or wrong (objective questions with a gold answer)."""
    return answered(sample) and sample.correct is not None


@dataclass(frozen=True)
class Pairing(Generic[Item]):
    """Questions common to several runs.

    rows: per common question (in the first run's order), each run's sample. conflicts: ids that hold
    different questions in different runs, never paired."""

    runs: int
    rows: tuple[tuple[Item, ...], ...]
    conflicts: tuple[str, ...]

    @cached_property
    def graded_by_all(self) -> int:
        """Common questions every run graded (the n of accuracy comparisons), counted a run's column at a
        time at C speed."""
        if not self.rows:
            return 0
        columns = zip(*self.rows, strict=True)
        checked = [
            map(
                operator.and_,
                map(operator.ne, map(operator.attrgetter("status"), column), repeat(SampleStatus.ERROR)),
                map(operator.is_not, map(operator.attrgetter("correct"), column), repeat(None)),
            )
            for column in columns
        ]
        return operator.countOf(map(all, zip(*checked, strict=True)), True)

    @property
    def paired(self) -> int:
        """How many questions the runs have in common."""
        return len(self.rows)

    def samples_of(self, run: int) -> list[Item]:
        """One run's samples on the common questions."""
        return [row[run] for row in self.rows]

    def warning(self) -> str | None:
        return conflict_warning(self.conflicts)


def conflict_note(conflicts: Sequence[str]) -> str:
    """Ids left unpaired because their content differs, in words ("" when there are none)."""
    if not conflicts:
        return ""
    shown = ", ".join(conflicts[:5]) + (" ..." if len(conflicts) > 5 else "")
    return (
        f"{len(conflicts)} question id(s) hold different questions in different runs "
        f"(another split or data version?) and are not paired: {shown}"
    )


def conflict_warning(conflicts: Sequence[str]) -> str | None:
    """The warning to print about unpaired ids, or None when there are none."""
    return f"warning: {conflict_note(conflicts)}" if conflicts else None


def pair_questions(runs: Sequence[Iterable[Item]], keep: Callable[[Item], bool] = answered) -> Pairing[Item]:
    """The questions every run holds with the same content and where `keep` holds for every run's sample
    (default: answered, errors left out). An id every run holds but not with the same content is a
    conflict: never paired, whatever `keep` says. Rows and conflicts come in the first run's order.

    Worked out with sets and columns rather than a loop over questions (a board of 10 runs of 100,000
    questions paired in a quarter of the time)."""
    with collection_paused():
        by_run = [{s.question_id: s for s in samples} for samples in runs]
        if not by_run:
            return Pairing(0, (), ())
        # ids every run holds, in the first run's order: only their samples are fingerprinted
        common = set(by_run[0]).intersection(*by_run[1:])
        held = [question_id for question_id in by_run[0] if question_id in common]
        shared = [dict(zip(held, map(by.__getitem__, held), strict=True)) for by in by_run]
        # (id, fingerprint) every run holds: ids whose content agrees in every run
        alike = set(zip(held, _fingerprints(shared[0].values()), strict=True)).intersection(
            *(zip(held, _fingerprints(by.values()), strict=True) for by in shared[1:])
        )
        same = {question_id for question_id, _ in alike}
        conflicts = [question_id for question_id in held if question_id not in same]
        # only the questions alike in every run are asked `keep`, as one at a time they were
        agreed = [question_id for question_id in held if question_id in same]
        columns = [list(map(by.__getitem__, agreed)) for by in shared]
        kept = set(agreed).intersection(
            *(_kept(dict(zip(agreed, column, strict=True)), keep) for column in columns)
        )
        if len(kept) < len(agreed):
            rows = [
                row
                for question_id, row in zip(agreed, zip(*columns, strict=True), strict=True)
                if question_id in kept
            ]
        else:
            rows = list(zip(*columns, strict=True))
        return Pairing(len(by_run), tuple(rows), tuple(conflicts))


def _fingerprints(items: Iterable[Answered]) -> Iterator[str]:
    return map(content_fingerprint, items)


def _kept(by_id: dict[str, Item], keep: Callable[[Item], bool]) -> set[str]:
    """The ids whose sample `keep` holds for (answered: its status is not an error, compared in C)."""
    if keep is answered:
        statuses = map(operator.attrgetter("status"), by_id.values())
        return set(compress(by_id, map(operator.ne, statuses, repeat(SampleStatus.ERROR))))
    return set(compress(by_id, map(keep, by_id.values())))


@dataclass(frozen=True)
class KeyPairing:
    """pair_questions over runs read as key rows (pair_key_rows): the common questions by id alone, for a
    comparison SQLite counts on them (kaoshi.api.counting). `ids`: in the first run's order. `columns`: each
    run's key row of each of them (Pairing.rows a run at a time), where paired from the rows; empty for a
    pairing read back from what the store keeps."""

    runs: int
    ids: tuple[str, ...]
    graded_by_all: int
    conflicts: tuple[str, ...]
    columns: tuple[list[Any], ...] = field(default=(), compare=False, repr=False)

    @property
    def paired(self) -> int:
        return len(self.ids)

    def warning(self) -> str | None:
        return conflict_warning(self.conflicts)


_ID = operator.itemgetter(0)
_FINGERPRINT = operator.itemgetter(1)
_STATUS = operator.itemgetter(2)
_CORRECT = operator.itemgetter(3)
Keyed = TypeVar("Keyed", bound=tuple[Any, ...])  # a key row, or one going on


def pair_key_rows(runs: Sequence[Sequence[KeyRow | AnswerRow]], *, answered_only: bool = True) -> KeyPairing:
    """pair_questions (keep: answered; with `answered_only` False, every sample) over each run's key
    rows, the first run's in question order: the same questions, conflicts and count graded by all,
    worked out a run's column at a time at C speed (a board of 10 runs of 100,000, read in question order,
    pairs in 0.3 s; KeyRow: what a row holds)."""
    return key_pairings(runs, (answered_only,))[0]


def key_pairings(
    runs: Sequence[Sequence[KeyRow | AnswerRow]], ways: Sequence[bool] = (True, False)
) -> list[KeyPairing]:
    """pair_key_rows each way of `ways` (answered_only, then not), the runs' rows lined up once for all: a
    report that keeps which questions differ pairs both ways."""
    if not runs:
        return [KeyPairing(0, (), 0, ()) for _ in ways]
    with collection_paused():
        ids, columns, conflicts, answered, graded = _lined_up(runs)
        # a graded sample is an answered one: the count is the same whether unanswered ones are paired
        graded_by_all = operator.countOf(graded, True)
        pairings = []
        for answered_only in ways:
            kept = [list(compress(column, answered)) for column in columns] if answered_only else columns
            paired = tuple(compress(ids, answered)) if answered_only else tuple(ids)
            pairings.append(KeyPairing(len(runs), paired, graded_by_all, conflicts, tuple(kept)))
        return pairings


def pair_graded_rows(runs: Sequence[Sequence[KeyRow | AnswerRow]]) -> KeyPairing:
    """pair_questions with keep=graded (what the paired statistics compare) over each run's key rows, as
    pair_key_rows pairs them."""
    if not runs:
        return KeyPairing(0, (), 0, ())
    with collection_paused():
        ids, columns, conflicts, _, graded = _lined_up(runs)
        kept = tuple(list(compress(column, graded)) for column in columns)
        return KeyPairing(
            len(runs), tuple(compress(ids, graded)), operator.countOf(graded, True), conflicts, kept
        )


def _lined_up(
    runs: Sequence[Sequence[Keyed]],
) -> tuple[list[str], list[list[Keyed]], tuple[str, ...], list[bool], list[bool]]:
    """The ids every run holds with the same content (first run's order) and each run's row of each; the
    ids every run holds with other content (conflicts, never paired); and per question, whether every run
    answered it and whether every run graded it."""
    ids, columns = _aligned_rows(runs)
    # an id whose content differs from the first run's in some run holds another question: never paired
    fingerprints = list(map(_FINGERPRINT, columns[0]))
    unlike = [False] * len(ids)
    for column in columns[1:]:
        differ = map(operator.ne, fingerprints, map(_FINGERPRINT, column))
        unlike = list(map(operator.or_, unlike, differ)) if any(unlike) else list(differ)
    conflicts = tuple(compress(ids, unlike))
    if conflicts:
        alike = list(map(operator.not_, unlike))
        ids = list(compress(ids, alike))
        columns = [list(compress(column, alike)) for column in columns]
    answered, graded = _answered_and_graded(columns)
    return ids, columns, conflicts, answered, graded


def _aligned_rows(runs: Sequence[Sequence[Keyed]]) -> tuple[list[str], list[list[Keyed]]]:
    """The ids every run holds, in the first run's order, with each run's row of each of them (as the
    store holds them, an id once a run)."""
    ids = list(map(_ID, runs[0]))
    columns = [list(runs[0])]
    for rows in runs[1:]:
        run_ids = list(map(_ID, rows))
        if run_ids == ids:  # the same questions in the same order (runs of one exam): lined up already
            columns.append(list(rows))
            continue
        by_id = dict(zip(run_ids, rows, strict=True))
        held = list(map(by_id.__contains__, ids))
        if not all(held):
            ids = list(compress(ids, held))
            columns = [list(compress(column, held)) for column in columns]
        columns.append(list(map(by_id.__getitem__, ids)))
    return ids, columns


def rows_of(runs: Sequence[Sequence[Keyed]], ids: Sequence[str]) -> list[list[Keyed]]:
    """Each run's row of each of the questions `ids` (ids every run holds)."""
    return [list(map(dict(zip(map(_ID, rows), rows, strict=True)).__getitem__, ids)) for rows in runs]


def _answered_and_graded(columns: Sequence[Sequence[KeyRow | AnswerRow]]) -> tuple[list[bool], list[bool]]:
    """Per question, whether every run answered it (its status is not an error), and whether every run
    graded it (answered, and checked right or wrong): a run's column at a time, its statuses read once."""
    answered: list[bool] = []
    graded: list[bool] = []
    for index, column in enumerate(columns):
        answers = list(map(operator.ne, map(_STATUS, column), repeat(SampleStatus.ERROR)))
        grades = map(operator.and_, answers, map(operator.is_not, map(_CORRECT, column), repeat(None)))
        if index == 0:
            answered, graded = answers, list(grades)
        else:
            answered = list(map(operator.and_, answered, answers))
            graded = list(map(operator.and_, graded, grades))
    return answered, graded
