"""Voting over answer matrices by hand (majority, weighted, ties, letter sets), cross-fitting, and
Dawid-Skene recovering the truth from a crowd with an adversarial member."""

from __future__ import annotations

import random

import pytest

from kaoshi.analysis.voting import accuracies, cross_fit_weights, dawid_skene, fold_of, plurality


def test_majority_counts_whole_answers() -> None:
    assert plurality(["A", "B", "A"]) == "A"
    assert plurality(["AC", "AC", "A", "ACD"]) == "AC"  # multi-choice: sets compared whole
    assert plurality([None, None, "正确"]) == "正确"  # abstentions do not vote
    assert plurality([None, None]) is None


def test_ties_go_to_the_earliest_model_among_the_tied() -> None:
    assert plurality(["B", "A", "A", "B"]) == "B"
    assert plurality(["C", "A", "B", "A", "B"]) == "A"  # C is not tied; A (model 2) precedes B (model 3)
    assert plurality([None, "AB", "CD"]) == "AB"


def test_weighted_votes_use_the_weights() -> None:
    # two weak models agree on B, one strong says A: 0.9 > 0.4 + 0.4
    assert plurality(["A", "B", "B"], [0.9, 0.4, 0.4]) == "A"
    assert plurality(["A", "B", "B"], [0.7, 0.4, 0.4]) == "B"
    assert plurality(["A", "B", "B"], [0.8, 0.4, 0.4]) == "A"  # exact tie (0.8 = 0.4 + 0.4): earliest


def test_accuracies_and_cross_fitting_never_use_a_questions_own_fold() -> None:
    correct = [[True, False], [True, True], [False, None], [True, False]]
    assert accuracies(correct, 2) == [0.75, pytest.approx(1 / 3)]
    ids = [f"q{i}" for i in range(40)]
    table = [[fold_of(q) == 0, True] for q in ids]  # model 0 is right exactly on fold 0
    weights = cross_fit_weights(ids, table, 2)
    for q, w in zip(ids, weights, strict=True):
        assert w[0] == (0.0 if fold_of(q) == 0 else 1.0)  # measured on the other fold only
        assert w[1] == 1.0
    assert {fold_of(q) for q in ids} == {0, 1}


def synthetic_crowd(n: int, seed: int = 3) -> tuple[list[str], list[list[str | None]]]:
    rng = random.Random(seed)
    letters = "ABCD"
    truth = [rng.choice(letters) for _ in range(n)]

    def noisy(t: str, accuracy: float) -> str:
        return t if rng.random() < accuracy else rng.choice([x for x in letters if x != t])

    ballots: list[list[str | None]] = []
    for t in truth:
        adversary = letters[(letters.index(t) + 1) % 4] if rng.random() < 0.9 else rng.choice(letters)
        ballots.append(
            [
                noisy(t, 0.65),
                noisy(t, 0.55),
                noisy(t, 0.45),
                adversary,  # systematically answers the next letter
                None if rng.random() < 0.2 else noisy(t, 0.5),  # abstains a fifth of the time
            ]
        )
    return truth, ballots


def test_dawid_skene_recovers_the_truth_despite_an_adversarial_model() -> None:
    truth, ballots = synthetic_crowd(400)
    result = dawid_skene(ballots)

    def accuracy(answers: list[str | None]) -> float:
        return sum(a == t for a, t in zip(answers, truth, strict=True)) / len(truth)

    majority = accuracy([plurality(b) for b in ballots])
    best_single = max(accuracy([b[j] for b in ballots]) for j in range(5))
    assert accuracy(result.answers) > 0.9
    assert accuracy(result.answers) > majority + 0.1 and accuracy(result.answers) > best_single + 0.2
    # it sees through the adversary: about 0.9 / 4 + 0.1 / 4 of its answers are right by chance
    assert result.accuracy[3] < 0.1 and result.accuracy[0] == pytest.approx(0.65, abs=0.07)
    assert 1 < result.iterations < 200


def test_dawid_skene_edge_cases() -> None:
    assert dawid_skene([[None, None]]).answers == [None]
    unanimous = dawid_skene([["A", "A"], ["B", "B"], [None, None]])
    assert unanimous.answers == ["A", "B", None] and unanimous.confidence[0] > 0.9
