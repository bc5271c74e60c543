"""Shuffled options: a deterministic bijection per seed, gold letters follow, answers map back exactly."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.data.errors import DataError
from kaoshi.data.model import Question
from kaoshi.data.shuffle import shuffle_exam, shuffle_question, to_original, unshuffle_question
from tests.support.files import write_jsonl

EXAM = load_exam_result("sample").exam
CHOICE = [q for q in EXAM.questions if q.type.is_choice]


def texts(question: Question, letters: frozenset[str]) -> set[str]:
    return {question.option_map[letter] for letter in letters}


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_shuffling_is_a_bijection_that_moves_every_choice_question(seed: int) -> None:
    for question in CHOICE:
        shuffled = shuffle_question(question, seed)
        assert shuffled.letters == question.letters  # same letters, in order
        assert sorted(t for _, t in shuffled.options) == sorted(t for _, t in question.options)
        assert sorted(shuffled.original_letters) == list(question.letters)
        assert shuffled.original_letters != question.letters  # never the identity
        assert isinstance(shuffled.answer, frozenset) and isinstance(question.answer, frozenset)
        assert texts(shuffled, shuffled.answer) == texts(question, question.answer)  # gold follows
        for letter, origin in zip(shuffled.letters, shuffled.original_letters, strict=True):
            assert shuffled.option_map[letter] == question.option_map[origin]
        assert unshuffle_question(shuffled) == question


def test_true_false_and_open_questions_are_left_alone() -> None:
    for question in EXAM.questions:
        if not question.type.is_choice:
            assert shuffle_question(question, 3) is question


def test_deterministic_per_seed_and_independent_of_the_subset() -> None:
    once, again = shuffle_exam(EXAM, 7), shuffle_exam(EXAM, 7)
    assert once.questions == again.questions and once.fingerprint == again.fingerprint
    assert shuffle_exam(EXAM.limited(5), 7).questions == once.questions[:5]
    other = shuffle_exam(EXAM, 8)
    assert any(a.options != b.options for a, b in zip(once.questions, other.questions, strict=True))
    assert once.fingerprint != EXAM.fingerprint
    # shuffling a shuffled question starts from the original order
    assert shuffle_question(shuffle_question(CHOICE[0], 1), 2) == shuffle_question(CHOICE[0], 2)


def test_every_answer_maps_back_exactly() -> None:
    for question in CHOICE:
        shuffled = shuffle_question(question, 5)
        for size in range(1, len(shuffled.letters) + 1):
            for chosen in map(frozenset, itertools.combinations(shuffled.letters, size)):
                back = to_original(shuffled, chosen)
                assert isinstance(back, frozenset) and len(back) == len(chosen)
                assert texts(question, back) == texts(shuffled, chosen)
        assert to_original(shuffled, shuffled.answer) == question.answer
    assert to_original(CHOICE[0], frozenset("A")) == frozenset("A")  # unshuffled: unchanged


def test_exam_shuffle_writes_a_kaoshi_exam_that_loads_back(tmp_path: Path) -> None:
    out = tmp_path / "shuffled.jsonl"
    assert main(["exam", "shuffle", "--benchmark", "sample", "--seed", "4", "-o", str(out)]) == 0
    loaded = load_exam_result(None, str(out)).exam
    expected = shuffle_exam(EXAM, 4)
    assert [q.content() for q in loaded.questions] == [q.content() for q in expected.questions]
    assert loaded.metadata["standard_scores"] == EXAM.metadata["standard_scores"]
    assert len(loaded.fewshot) == len(EXAM.fewshot)


def test_bad_original_letters_name_the_line_and_field(tmp_path: Path) -> None:
    row = {"id": "q1", "type": "single", "question": "？", "options": ["甲", "乙", "丙"], "answer": "A"}
    path = write_jsonl(tmp_path / "bad.jsonl", [row, {**row, "id": "q2", "original_letters": "ABD"}])
    with pytest.raises(DataError) as info:
        load_exam_result(None, str(path))
    (error,) = info.value.errors
    assert (error.line, error.field) == (2, "original_letters") and "permutation" in str(error)
