"""The contamination check: the same questions with options in the original and in a shuffled order.

A model that knows the material answers both alike; one that memorised answer positions is right in
the original order and wrong once the options move. Questions are paired by id and content (whatever
the option order), shuffled answers are mapped back to the original letters (by the recorded
permutation, or by matching option texts for files shuffled elsewhere, such as
QualBench_shuffled.jsonl), and the discordant pairs go to McNemar's exact test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from kaoshi.data.model import Gold, Question, format_gold
from kaoshi.data.shuffle import to_original
from kaoshi.store.pairing import graded, pair_questions, question_fingerprint
from kaoshi.store.records import SampleRecord


@dataclass(frozen=True)
class PairedQuestion:
    question_id: str
    domain: str | None
    qtype: str
    gold: Gold  # in the original letters
    original: Gold  # the answer in the original run
    shuffled: Gold  # the shuffled run's answer, mapped back to the original letters (None: unmappable)
    shown: Gold  # the shuffled run's answer in the letters it saw
    original_correct: bool
    shuffled_correct: bool
    old_position: bool  # in the shuffled order, it chose the letters where the gold used to stand

    @property
    def memorised_candidate(self) -> bool:
        """Right only in the original order."""
        return self.original_correct and not self.shuffled_correct


def _normalise(text: str) -> str:
    return "".join(text.split())


def _origin_by_text(shuffled: Question, original: Question) -> dict[str, str] | None:
    """shown letter -> original letter, matching option texts; None if they do not match one to one."""
    by_text = {_normalise(text): letter for letter, text in original.options}
    mapping = {letter: by_text.get(_normalise(text)) for letter, text in shuffled.options}
    if len(by_text) != len(original.options) or None in mapping.values():
        return None
    if sorted(mapping.values()) != sorted(by_text.values()):  # type: ignore[type-var]
        return None
    return {shown: origin for shown, origin in mapping.items() if origin is not None}


def map_back(shuffled: Question, original: Question, answer: Gold) -> Gold:
    """The shuffled run's answer in the original question's letters (None if the options cannot be
    matched)."""
    if not isinstance(answer, frozenset):
        return answer
    if shuffled.original_letters:
        return to_original(shuffled, answer)
    mapping = _origin_by_text(shuffled, original)
    if mapping is None:
        return None
    return frozenset(mapping[letter] for letter in answer if letter in mapping)


@dataclass(frozen=True)
class PairedRuns:
    pairs: list[PairedQuestion]
    conflicts: tuple[str, ...]  # ids holding different questions in the two runs, left out


class CheckedSample(NamedTuple):
    """What the check keeps of a sample: its key (id and content fingerprint), what pairing and its counts
    read (type, domain, status, outcome, score), its gold and answer, and its question as shown with only
    what mapping an answer back reads (its options and their original letters; no stem or explanation):
    a fraction of the sample, for runs of 100,000 questions."""

    question_id: str
    fingerprint: str
    qtype: str
    domain: str | None
    status: str
    correct: bool | None
    score: float | None
    gold: Gold
    answer: Gold
    shown: Question


def checked_sample(sample: SampleRecord, fingerprint: str | None = None) -> CheckedSample:
    """The sample as the check keeps it; `fingerprint`: its question's as stored (else made from it)."""
    question = Question.from_content(sample.question)
    return CheckedSample(
        sample.question_id,
        fingerprint or question_fingerprint(sample),
        sample.qtype,
        sample.domain,
        sample.status,
        sample.correct,
        sample.score,
        sample.gold,
        sample.answer,
        replace(question, stem="", explanation="", verbatim=()),
    )


def pair_runs(original: Iterable[CheckedSample], shuffled: Iterable[CheckedSample]) -> PairedRuns:
    """Questions graded in both runs (errors and open questions left out), in the original run's order.

    Paired by id and content (`question_fingerprint` ignores the option order and follows the gold to
    its option text), so a shuffled question pairs with its original and another question under the
    same id does not."""
    pairing = pair_questions([original, shuffled], keep=graded)
    pairs = []
    for first, second in pairing.rows:
        asked = second.shown
        before = first.shown
        shown = second.answer
        shuffled_gold = second.gold
        pairs.append(
            PairedQuestion(
                question_id=first.question_id,
                domain=first.domain,
                qtype=first.qtype,
                gold=first.gold,
                original=first.answer,
                shuffled=map_back(asked, before, shown),
                shown=shown,
                original_correct=bool(first.correct),
                shuffled_correct=bool(second.correct),
                old_position=(
                    isinstance(shown, frozenset)
                    and shown == first.gold
                    and shuffled_gold != first.gold
                    and not second.correct
                ),
            )
        )
    return PairedRuns(pairs, pairing.conflicts)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b and c discordant pairs: the binomial test of b against
    (b + c) / 2, doubling the smaller tail (capped at 1)."""
    n = b + c
    k = min(b, c)
    if 2 * k + 1 >= n:  # the smaller tail holds half the pairs or more: doubled, it is 1 or above
        return 1.0
    # the tail's binomial coefficients made each from the one before, exactly: math.comb of each took
    # time growing with n squared (two runs of 100,000 questions, 45,000 discordant: minutes a group)
    term = total = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        total += term
    return min(1.0, 2 * (total / (1 << n)))


@dataclass(frozen=True)
class ContaminationRow:
    label: str
    n: int
    original_correct: int
    shuffled_correct: int
    only_original: int  # b: position-memorised candidates
    only_shuffled: int  # c
    old_position: int  # of b, those that chose the gold's old letters

    @property
    def original_accuracy(self) -> float | None:
        return self.original_correct / self.n if self.n else None

    @property
    def shuffled_accuracy(self) -> float | None:
        return self.shuffled_correct / self.n if self.n else None

    @property
    def drop(self) -> float | None:
        """Original minus shuffled accuracy (positive: worse once shuffled)."""
        return (self.original_correct - self.shuffled_correct) / self.n if self.n else None

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_original, self.only_shuffled)

    def to_json(self) -> dict[str, object]:
        return {
            "group": self.label,
            "n": self.n,
            "original_accuracy": self.original_accuracy,
            "shuffled_accuracy": self.shuffled_accuracy,
            "drop": self.drop,
            "only_original": self.only_original,
            "only_shuffled": self.only_shuffled,
            "old_position": self.old_position,
            "mcnemar_p": self.p_value,
        }


def contamination_row(label: str, pairs: Sequence[PairedQuestion]) -> ContaminationRow:
    return ContaminationRow(
        label,
        len(pairs),
        sum(p.original_correct for p in pairs),
        sum(p.shuffled_correct for p in pairs),
        sum(p.memorised_candidate for p in pairs),
        sum(p.shuffled_correct and not p.original_correct for p in pairs),
        sum(p.memorised_candidate and p.old_position for p in pairs),
    )


GROUPINGS: dict[str, Callable[[PairedQuestion], str]] = {
    "domain": lambda p: p.domain or "(none)",
    "type": lambda p: p.qtype,
}


def grouped_rows(pairs: Sequence[PairedQuestion], key: str) -> list[ContaminationRow]:
    groups: dict[str, list[PairedQuestion]] = {}
    for pair in pairs:
        groups.setdefault(GROUPINGS[key](pair), []).append(pair)
    return [contamination_row(name, members) for name, members in sorted(groups.items())]


def answer_text(answer: Gold) -> str:
    return "—" if answer is None else format_gold(answer)
