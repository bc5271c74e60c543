"""The questions where runs differ: the same question (id and content) answered otherwise, or with another
outcome. The viewer's compare page lists them, a page at a time, with each run's answer side by side.

Which questions differ is worked out once over every paired question (key_differences, from the runs'
answer rows; differences, from their score rows) and can be kept with the comparison in the store
(kaoshi.api.kept: their ids, Differing); a page's differences are made again from those questions' rows
alone (differences_among), by the code that tells them apart in the first place.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any, NamedTuple, Protocol

from kaoshi.bulk import collection_paused
from kaoshi.qtypes import kind_of
from kaoshi.store.columns import ScoreRow, answer_text
from kaoshi.store.pairing import AnswerRow, KeyPairing, pair_key_rows, pair_questions, rows_of


class Judged(Protocol):
    """What an answer's outcome is made of: a SampleRecord, a ScoreRow, or those values alone."""

    @property
    def status(self) -> str: ...

    @property
    def correct(self) -> int | None: ...  # a bool, or its stored 0 / 1

    @property
    def qtype(self) -> str: ...

    @property
    def score(self) -> float | None: ...


def outcome(sample: Judged) -> str:
    """correct / wrong / unparsed / ambiguous / error / judged / ungraded, as the browser filters them."""
    if sample.status == "error":
        return "error"
    if sample.correct is None:
        judged = not kind_of(sample.qtype).objective and sample.score is not None
        return "judged" if judged else "ungraded"
    if sample.correct:
        return "correct"
    return sample.status if sample.status in ("unparsed", "ambiguous") else "wrong"


@dataclass(frozen=True)
class Answer:
    """One run's answer to a question where the runs differ (`response`: read for the page showing it)."""

    answer: str
    outcome: str
    response: str = ""


@dataclass(frozen=True)
class Difference:
    question_id: str
    gold: str
    answers: tuple[Answer, ...]  # in the order of the compared runs
    stem: str = ""  # read for the page showing it


@dataclass(frozen=True)
class Differing:
    """Which questions differ: their ids in the first run's order, how many questions were paired (the
    same id and content in every run, errors included) and the ids holding different questions."""

    ids: tuple[str, ...]
    paired: int
    conflicts: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"ids": list(self.ids), "paired": self.paired, "conflicts": list(self.conflicts)}

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Differing:
        return cls(tuple(value["ids"]), int(value["paired"]), tuple(value["conflicts"]))


def _answer(row: ScoreRow) -> Answer:
    return Answer(row.answer_text or "", outcome(row))


def differences(runs: Sequence[Sequence[ScoreRow]]) -> tuple[list[Difference], int, tuple[str, ...]]:
    """The questions (same id, same content) where the runs' answers or outcomes differ, in the first run's
    order; with how many questions were paired and the ids left unpaired. From the runs' score rows: the
    stems and responses are read for the page that shows them. For runs SQLite reads as answer rows,
    key_differences finds the same."""
    pairing = pair_questions(runs, keep=lambda _: True)
    found = []
    for row in pairing.rows:
        # what an answer and its outcome are made of: rows alike in these cannot differ (checked first,
        # so that only the questions that may differ get their answers written out)
        if len({(r.answer, r.status, r.correct, r.score, r.qtype) for r in row}) == 1:
            continue
        answers = tuple(_answer(sample) for sample in row)
        if len({a.answer for a in answers}) > 1 or len({a.outcome for a in answers}) > 1:
            found.append(Difference(row[0].question_id, row[0].gold_text, answers))
    return found, len(pairing.rows), pairing.conflicts


class _Judged(NamedTuple):
    """An answer row's outcome values, as outcome reads them."""

    status: str
    correct: int | None
    qtype: str
    score: float | None


# what an answer and its outcome are made of, in an answer row (store.pairing.AnswerRow)
_ANSWERED = operator.itemgetter(5, 2, 3, 4, 7)
_ID = operator.itemgetter(0)


def key_differences(runs: Sequence[Sequence[AnswerRow]]) -> tuple[list[Difference], int, tuple[str, ...]]:
    """`differences` over the runs' answer rows (kaoshi.store.columns.answer_keys: the first run's in
    question order): rows alike in what an answer and its outcome are made of are told apart a run's
    column at a time at C speed, and each distinct set of answers is written out once."""
    pairing = pair_key_rows(runs, answered_only=False)
    found = list(_differences_among(runs, pairing.ids))
    return found, len(pairing.ids), pairing.conflicts


def differing_questions(runs: Sequence[Sequence[AnswerRow]], pairing: KeyPairing | None = None) -> Differing:
    """key_differences as what is kept of them, the ids alone: worked out a run's column at a time, each
    distinct set of answers told apart once. `pairing`: the runs paired already, every sample
    (pair_key_rows with answered_only False)."""
    if pairing is None:
        pairing = pair_key_rows(runs, answered_only=False)
    with collection_paused():  # what is made a question at a time holds no cycle: not walked again and again
        return _differing(runs, pairing)


def _differing(runs: Sequence[Sequence[AnswerRow]], pairing: KeyPairing) -> Differing:
    columns = pairing.columns or rows_of(runs, pairing.ids)
    # rows alike whole show alike: only the others are looked at (a run's rows compared at C speed)
    unlike = [False] * len(pairing.ids)
    for column in columns[1:]:
        unlike = list(map(operator.or_, unlike, map(operator.ne, columns[0], column)))
    # each run's answer as shown, one object for each way one is shown: told apart by identity
    shown = _Shown()
    answers = [list(map(shown.__getitem__, map(_ANSWERED, compress(column, unlike)))) for column in columns]
    differ = [False] * operator.countOf(unlike, True)
    for other in answers[1:]:
        differ = list(map(operator.or_, differ, map(operator.is_not, answers[0], other)))
    return Differing(
        tuple(compress(compress(pairing.ids, unlike), differ)), len(pairing.ids), pairing.conflicts
    )


class _Shown(dict[tuple[Any, ...], tuple[str, str]]):
    """How an answer is shown (its text and outcome) by what it is made of (_ANSWERED), each worked out
    once: answers shown alike are the same object."""

    def __init__(self) -> None:
        super().__init__()
        self._alike: dict[tuple[str, str], tuple[str, str]] = {}

    def __missing__(self, made_of: tuple[Any, ...]) -> tuple[str, str]:
        answer, status, correct, score, qtype = made_of
        shown = (answer_text(answer) or "", outcome(_Judged(status, correct, qtype, score)))
        found = self[made_of] = self._alike.setdefault(shown, shown)
        return found


def differences_among(runs: Sequence[Sequence[AnswerRow]], ids: Sequence[str]) -> list[Difference]:
    """The differences among the questions `ids` (paired ones, each run's answer rows of them in any
    order), in the order of `ids`: a page of what differing_questions found, as key_differences makes it.
    An id some run no longer holds (a run written since) is left out."""
    held = [set(map(_ID, rows)) for rows in runs]
    return list(_differences_among(runs, [one for one in ids if all(one in ids_of for ids_of in held)]))


def _answers(alike: tuple[tuple[Any, ...], ...]) -> tuple[Answer, ...] | None:
    """Each run's answer as shown, from what it is made of (_ANSWERED); None where they show alike."""
    answers = tuple(
        Answer(answer_text(answer) or "", outcome(_Judged(status, correct, qtype, score)))
        for answer, status, correct, score, qtype in alike
    )
    differ = len({a.answer for a in answers}) > 1 or len({a.outcome for a in answers}) > 1
    return answers if differ else None


def _differences_among(runs: Sequence[Sequence[AnswerRow]], ids: Sequence[str]) -> Iterator[Difference]:
    by_id = [dict(zip(map(_ID, rows), rows, strict=True)) for rows in runs]
    columns = [list(map(by.__getitem__, ids)) for by in by_id]
    answered = [list(map(_ANSWERED, column)) for column in columns]
    unlike = [list(map(operator.ne, answered[0], other)) for other in answered[1:]]
    written: dict[tuple[Any, ...], tuple[Answer, ...] | None] = {}
    for index in compress(range(len(ids)), map(any, zip(*unlike, strict=True))):
        alike = tuple(column[index] for column in answered)
        if alike not in written:
            written[alike] = _answers(alike)
        shown = written[alike]
        if shown is not None:
            first = columns[0][index]
            yield Difference(first[0], answer_text(first[6]) or "", shown)
