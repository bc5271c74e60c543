"""Shuffled options, for the contamination check: a model that memorised a benchmark's answer positions
loses accuracy when the options move.

Each choice question's options are permuted by a generator seeded with (seed, question id), so a
question gets the same permutation whatever subset or order it is loaded in, and never the identity
(an unmoved question tells nothing). Gold letters follow their options; true/false and open questions
are left alone. Every shuffled question records the original letter of each option (`original_letters`),
so answers map back to the original letters exactly.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace

from kaoshi.data.model import Exam, Gold, Question


def _rng(seed: int, question_id: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}\x00{question_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def shuffle_question(question: Question, seed: int) -> Question:
    """The question with its options permuted (a choice question with two or more options), else as is.

    A question that was shuffled before is shuffled again from its original order, so `original_letters`
    always refers to the original exam."""
    if not question.type.is_choice or len(question.options) < 2:
        return question
    original = unshuffle_question(question)
    letters = original.letters
    order = list(range(len(letters)))
    rng = _rng(seed, question.id)
    while order == sorted(order):
        rng.shuffle(order)
    options = tuple((letters[new], original.options[old][1]) for new, old in enumerate(order))
    origin = tuple(letters[old] for old in order)
    gold = original.answer
    if isinstance(gold, frozenset):
        gold = frozenset(letters[new] for new, old in enumerate(order) if letters[old] in gold)
    return replace(original, options=options, answer=gold, original_letters=origin, verbatim=())


def to_original(question: Question, answer: Gold) -> Gold:
    """An answer to the shuffled question in the original letters (unchanged for unshuffled ones)."""
    if not question.original_letters or not isinstance(answer, frozenset):
        return answer
    origin = dict(zip(question.letters, question.original_letters, strict=True))
    return frozenset(origin[letter] for letter in answer if letter in origin)


def unshuffle_question(question: Question) -> Question:
    """The question as it was before shuffling."""
    if not question.original_letters:
        return question
    by_origin = dict(zip(question.original_letters, (text for _, text in question.options), strict=True))
    letters = question.letters
    options = tuple((letter, by_origin[letter]) for letter in letters)
    return replace(
        question, options=options, answer=to_original(question, question.answer), original_letters=()
    )


def shuffle_exam(exam: Exam, seed: int) -> Exam:
    """Every evaluated question shuffled; the few-shot pool is left in its original order."""
    questions = tuple(shuffle_question(q, seed) for q in exam.questions)
    return replace(exam, questions=questions, metadata={**exam.metadata, "shuffle_seed": seed})
