"""Pairing runs question by question: the same id holding the same question in every run.

An id alone is not a question: C-Eval's dev and val splits both have `law/0`, and a corrected data file
keeps its ids. Every comparison between runs (report, leaderboard, compare, vote, contamination) pairs
through `pair_questions`, which pairs an id only where its content fingerprint agrees across runs.
"""

from __future__ import annotations

import hashlib
import json
import operator
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
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


def fingerprint_of_content(qtype: str, content: Mapping[str, Any], gold: Gold) -> str:
    """question_fingerprint of a question's type, content (its stored JSON) and gold answer."""
    options = {str(letter): _squash(str(text)) for letter, text in content.get("options", ())}
    value = [
        qtype,
        _squash(str(content.get("stem", ""))),
        sorted(options.values()),
        _gold_content(gold, options),
    ]
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()


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
    comparison SQLite counts on them (kaoshi.api.counting). `ids`: in the first run's order."""

    runs: int
    ids: tuple[str, ...]
    graded_by_all: int
    conflicts: tuple[str, ...]

    @property
    def paired(self) -> int:
        return len(self.ids)

    def warning(self) -> str | None:
        return conflict_warning(self.conflicts)


_ID = operator.itemgetter(0)
_FINGERPRINT = operator.itemgetter(1)
_ID_AND_FINGERPRINT = operator.itemgetter(0, 1)
_STATUS = operator.itemgetter(2)
_CORRECT = operator.itemgetter(3)


def pair_key_rows(runs: Sequence[Sequence[KeyRow | AnswerRow]], *, answered_only: bool = True) -> KeyPairing:
    """pair_questions (keep: answered; with `answered_only` False, every sample) over each run's key
    rows, the first run's in question order: the same questions, conflicts and count graded by all,
    worked out with sets of ids at C speed (a board of 10 runs of 100,000 pairs in about a second;
    KeyRow: what a row holds)."""
    return key_pairings(runs, (answered_only,))[0]


def key_pairings(
    runs: Sequence[Sequence[KeyRow | AnswerRow]], ways: Sequence[bool] = (True, False)
) -> list[KeyPairing]:
    """pair_key_rows each way of `ways` (answered_only, then not), the ids and contents compared once for
    all: a report that keeps which questions differ pairs both ways (0.3 s a way for two runs of
    100,000)."""
    if not runs:
        return [KeyPairing(0, (), 0, ()) for _ in ways]
    with collection_paused():
        ids = [list(map(_ID, rows)) for rows in runs]
        first = ids[0]
        held = set(first).intersection(*ids[1:])
        # ids whose content differs from the first run's in some run (equal to the first in every run is
        # alike in all): fingerprints compared a run's column at a time, no pair of them built
        fingerprint_of = dict(zip(first, map(_FINGERPRINT, runs[0]), strict=True))
        differing: set[str] = set()
        for run_ids, rows in zip(ids[1:], runs[1:], strict=True):
            found = map(fingerprint_of.get, run_ids)
            differing.update(compress(run_ids, map(operator.ne, found, map(_FINGERPRINT, rows))))
        same = held - differing
        conflicts = tuple(
            question_id for question_id in first if question_id in held and question_id in differing
        )
        answered_ids = (
            [
                list(compress(run_ids, map(operator.ne, map(_STATUS, rows), repeat(SampleStatus.ERROR))))
                for run_ids, rows in zip(ids, runs, strict=True)
            ]
            if any(ways)
            else []
        )
        graded_ids = [  # answered and checked (graded)
            compress(
                run_ids,
                map(
                    operator.and_,
                    map(operator.ne, map(_STATUS, rows), repeat(SampleStatus.ERROR)),
                    map(operator.is_not, map(_CORRECT, rows), repeat(None)),
                ),
            )
            for run_ids, rows in zip(ids, runs, strict=True)
        ]
        # a graded sample is an answered one: the count is the same whether unanswered ones are paired
        graded_by_all = len(same.intersection(*graded_ids))
        pairings = []
        for answered_only in ways:
            kept = same.intersection(*answered_ids) if answered_only else same
            paired = tuple(question_id for question_id in first if question_id in kept)
            pairings.append(KeyPairing(len(runs), paired, graded_by_all, conflicts))
        return pairings


def key_outcomes(
    rows: Iterable[KeyRow | AnswerRow], among: Collection[str] | None = None
) -> dict[QuestionKey, float]:
    """(question id, fingerprint) -> 1.0 / 0.0 for each checked answer among the key rows (only the ids
    `among` holds, when given): RunSummary.outcomes, as kaoshi.store.columns.outcome_keys reads them, from
    rows a comparison has already read."""
    checked = [
        row
        for row in rows
        if row[3] is not None and row[2] != SampleStatus.ERROR and (among is None or row[0] in among)
    ]
    return dict(zip(map(_ID_AND_FINGERPRINT, checked), map(float, map(_CORRECT, checked)), strict=True))
