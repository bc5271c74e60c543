"""Deterministic, stratified, disjoint train/test splits of an exam, with a manifest of both parts.

The manifest lists a content key per question: a hash of its type, stem and option texts (whitespace
removed, options sorted), so the same question is recognised under another id, in another file format or
with its options shuffled. Fine-tuned adapters carry their training keys; evaluation refuses overlap.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kaoshi.data.model import Exam, Question
from kaoshi.errors import InputError

STRATA: dict[str, Callable[[Question], str]] = {
    "domain": lambda q: q.domain or "",
    "type": lambda q: q.type.value,
    "subject": lambda q: q.subject or "",
}


def content_key(question: Question) -> str:
    """The question's identity for leakage checks: type, stem and option texts, not id or metadata."""
    squash = "".join
    value = [
        question.type.value,
        squash(question.stem.split()),
        sorted(squash(t.split()) for _, t in question.options),
    ]
    return hashlib.sha256(json.dumps(value, ensure_ascii=False).encode()).hexdigest()


@dataclass(frozen=True)
class Split:
    train: tuple[Question, ...]
    test: tuple[Question, ...]
    seed: int
    ratio: float
    stratify: tuple[str, ...]
    duplicates_moved: int = 0  # test questions that repeat a training question, moved to train

    def manifest(self, source: str) -> dict[str, Any]:
        def part(questions: Sequence[Question]) -> dict[str, Any]:
            return {
                "questions": len(questions),
                "fingerprint": Exam("", tuple(questions)).fingerprint,
                "ids": [q.id for q in questions],
                "content_keys": sorted(content_key(q) for q in questions),
            }

        return {
            "kind": "kaoshi-split",
            "source": source,
            "seed": self.seed,
            "train_ratio": self.ratio,
            "stratify": list(self.stratify),
            "duplicates_moved": self.duplicates_moved,
            "train": part(self.train),
            "test": part(self.test),
        }


def _allocate(sizes: list[int], ratio: float) -> list[int]:
    """Train counts per stratum summing to round(total × ratio): floors, then the largest remainders."""
    exact = [n * ratio for n in sizes]
    counts = [math.floor(x) for x in exact]
    target = round(sum(sizes) * ratio)
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[: max(0, target - sum(counts))]:
        counts[i] += 1
    return counts


def split_exam(exam: Exam, ratio: float, seed: int, stratify: Sequence[str] = ()) -> Split:
    """Each stratum's questions (sorted by id, then shuffled with the seed) go to train first; the total
    train size is round(n × ratio), spread over strata by largest remainder. Order of the exam file does
    not matter; the same seed gives the same split."""
    if not 0 < ratio < 1:
        raise InputError(f"--train must be between 0 and 1, got {ratio}")
    unknown = [s for s in stratify if s not in STRATA]
    if unknown:
        raise InputError(f"cannot stratify by {unknown[0]!r} (choose from {', '.join(STRATA)})")
    ids = [q.id for q in exam.questions]
    if len(set(ids)) != len(ids):
        raise InputError("the exam has repeated question ids; a split needs unique ids")
    strata: dict[tuple[str, ...], list[Question]] = {}
    for question in sorted(exam.questions, key=lambda q: q.id):
        strata.setdefault(tuple(STRATA[s](question) for s in stratify), []).append(question)
    names = sorted(strata)
    rng = random.Random(seed)
    for name in names:
        rng.shuffle(strata[name])
    counts = _allocate([len(strata[n]) for n in names], ratio)
    chosen = {q.id for name, count in zip(names, counts, strict=True) for q in strata[name][:count]}
    # The same question under two ids must not end up on both sides: copies join the training part.
    trained = {content_key(q) for q in exam.questions if q.id in chosen}
    moved = {q.id for q in exam.questions if q.id not in chosen and content_key(q) in trained}
    chosen |= moved
    train = tuple(q for q in exam.questions if q.id in chosen)
    test = tuple(q for q in exam.questions if q.id not in chosen)
    return Split(train, test, seed, ratio, tuple(stratify), len(moved))
