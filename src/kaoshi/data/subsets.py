"""A stratified random sample of an exam (`kaoshi run --sample N --seed S`): N questions drawn at random
within strata (subjects, else domains, else question types), so that a paid model is measured on a small,
honest part of the exam and the full exam's score is estimated from it (kaoshi.analysis.estimate).

`--limit N` takes the first N questions of each subject, which is a smoke test, not a sample: data files
are often sorted (by year, by difficulty, by answer), so the first questions are not like the rest.

Allocation: each stratum first gets two questions (one where it has one), questions an accuracy counts
where it has them, so that every stratum's accuracy is seen and its variance can be estimated; the rest
are shared in proportion to the questions the strata have left, the largest remainders rounding up.
Strata are the finest grouping with at most one stratum per two questions drawn; with fewer questions
drawn than that, one stratum (a simple random sample). Drawn questions keep the exam's order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.data.model import Question
from kaoshi.errors import InputError

# The groupings a sample is stratified by, finest first; "all": one stratum.
STRATA_KEYS = ("subject", "domain", "type", "all")
# Each stratum's first draws, before the proportional share: two let its variance be estimated.
_FIRST_DRAWS = 2


@dataclass(frozen=True)
class Stratum:
    """One stratum of an exam and of the sample drawn from it."""

    questions: int  # in the exam
    counted: int  # of those, the ones an accuracy counts (objective, with a gold answer)
    drawn: int  # in the sample

    def to_json(self) -> list[int]:
        return [self.questions, self.counted, self.drawn]


@dataclass(frozen=True)
class Subset:
    """How a sample was drawn: `size` questions with `seed`, stratified `by` a grouping, with each
    stratum's size in the exam and in the sample (recorded in the run's spec, so that its report can
    estimate the full exam's score)."""

    size: int
    seed: int
    by: str
    strata: Mapping[str, Stratum]

    @property
    def population(self) -> int:
        return sum(stratum.questions for stratum in self.strata.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "size": self.size,
            "seed": self.seed,
            "by": self.by,
            "strata": {name: stratum.to_json() for name, stratum in self.strata.items()},
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Subset:
        try:
            strata = {str(name): Stratum(*map(int, counts)) for name, counts in value["strata"].items()}
            return cls(int(value["size"]), int(value["seed"]), str(value["by"]), strata)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"a run's sample is not one kaoshi reads ({exc!r}): {value!r}") from None


def stratum_of(question: Question, by: str) -> str:
    """The stratum a question falls in under grouping `by` (a question without one: '(none)')."""
    if by == "all":
        return "all"
    if by == "type":
        return question.type.value
    value = getattr(question, by)
    return "(none)" if value is None else str(value)


def strata_key(questions: Sequence[Question], size: int) -> str:
    """The finest grouping the exam's questions carry with at most one stratum per two questions drawn:
    subjects, else domains, else types, else one stratum."""
    for by in STRATA_KEYS[:-1]:
        if by != "type" and all(getattr(question, by) is None for question in questions):
            continue  # the exam has no such grouping
        if len({stratum_of(question, by) for question in questions}) * _FIRST_DRAWS <= size:
            return by
    return "all"


def allocate(sizes: Mapping[str, int], size: int) -> dict[str, int]:
    """How many of `size` draws each stratum of `sizes` gets: its first draws, then the rest shared in
    proportion to the questions each has left, whole shares first and the largest remainders rounding up
    (ties to the stratum named first); never more than a stratum holds."""
    total = sum(sizes.values())
    if not 0 < size <= total:
        raise InputError(f"--sample {size}: draw between 1 and the exam's {total} questions")
    drawn = {name: min(_FIRST_DRAWS, held) for name, held in sizes.items()}
    if sum(drawn.values()) > size:  # more strata than draws: one draw each to the largest strata
        order = sorted(sizes, key=lambda name: -sizes[name])
        return {name: int(name in order[:size]) for name in sizes}
    while (left := size - sum(drawn.values())) > 0:
        room = {name: sizes[name] - drawn[name] for name in sizes if sizes[name] > drawn[name]}
        shares = {name: left * free / sum(room.values()) for name, free in room.items()}
        for name, share in shares.items():
            drawn[name] += int(share)
        rest = left - sum(int(share) for share in shares.values())
        by_remainder = sorted(shares, key=lambda name: -(shares[name] - int(shares[name])))
        for name in by_remainder[:rest]:
            drawn[name] += 1
    return drawn


def draw_sample(
    questions: Sequence[Question], size: int, seed: int, counted: Callable[[Question], bool]
) -> tuple[tuple[Question, ...], Subset]:
    """`size` questions drawn at random with `seed`, stratified (strata_key), in the exam's order; and
    how they were drawn. `counted`: whether an accuracy counts a question (its objective questions with a
    gold answer), for the estimate's weights."""
    by = strata_key(questions, size)
    members: dict[str, list[int]] = {}
    for index, question in enumerate(questions):
        members.setdefault(stratum_of(question, by), []).append(index)
    allocation = allocate({name: len(found) for name, found in members.items()}, size)
    rng = random.Random(seed)
    chosen: set[int] = set()
    strata = {}
    for name in sorted(members):  # a fixed order, whatever order the strata were met in
        found = members[name]
        checkable = [i for i in found if counted(questions[i])]
        # a stratum's first draws are questions an accuracy counts, so that its accuracy is seen even
        # where most of its questions are open; the rest from all its others. Every counted question is
        # treated alike, so those drawn are still a simple random sample of them.
        first = rng.sample(checkable, min(_FIRST_DRAWS, len(checkable), allocation[name]))
        taken = set(first)
        others = [i for i in found if i not in taken]
        chosen.update(first, rng.sample(others, allocation[name] - len(first)))
        strata[name] = Stratum(len(found), len(checkable), allocation[name])
    drawn = tuple(questions[i] for i in sorted(chosen))
    return drawn, Subset(size, seed, by, strata)
