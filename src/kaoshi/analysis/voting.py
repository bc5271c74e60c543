"""Combining several models' answers per question (QualBench's "LLM crowdsourcing").

Answers are compared whole: a multiple-choice answer is its set of letters, so {A, C} and {C, A} are one
vote and {A} is a different one. A model that gave no readable answer abstains.

- majority: the answer with the most votes.
- weighted: each vote counts the model's accuracy. The paper takes the accuracies on the very questions
  being voted on (in-sample, optimistic); by default kaoshi cross-fits instead: the questions are split in
  two folds by a hash of their id, and each fold is voted with accuracies measured on the other.
- Dawid-Skene: EM over a confusion matrix per model (what it answers given each true answer), so a model
  that is systematically wrong still carries information and a weak one is down-weighted; run per
  question type, with the truth of a question restricted to answers some model gave.

Ties (majority and weighted) go to the tied answer of the earliest-listed model that gave one of them.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

VOTE_METHODS = ("majority", "weighted", "dawid-skene")

Ballot = Sequence[str | None]  # one question: each model's answer key, None when it abstains


def plurality(answers: Ballot, weights: Sequence[float] | None = None) -> str | None:
    """The answer with the largest (weighted) vote; ties to the earliest model's answer among the tied."""
    totals: dict[str, float] = {}
    for j, answer in enumerate(answers):
        if answer is not None:
            totals[answer] = totals.get(answer, 0.0) + (1.0 if weights is None else weights[j])
    if not totals:
        return None
    best = max(totals.values())
    tied = {a for a, total in totals.items() if math.isclose(total, best, rel_tol=1e-12, abs_tol=1e-12)}
    return next(a for a in answers if a in tied)


def fold_of(question_id: str, folds: int = 2) -> int:
    """A stable fold for cross-fitting, from the question id alone."""
    return int.from_bytes(hashlib.sha256(question_id.encode()).digest()[:4], "big") % folds


def accuracies(correct: Sequence[Sequence[bool | None]], n_models: int) -> list[float]:
    """Each model's accuracy over the questions where its correctness is known (0.5 with none)."""
    result = []
    for j in range(n_models):
        known = [row[j] for row in correct if row[j] is not None]
        result.append(sum(bool(c) for c in known) / len(known) if known else 0.5)
    return result


def cross_fit_weights(
    ids: Sequence[str], correct: Sequence[Sequence[bool | None]], n_models: int, folds: int = 2
) -> list[list[float]]:
    """Per question, each model's accuracy measured on the other folds' questions."""
    fold = [fold_of(q, folds) for q in ids]
    per_fold = [
        accuracies([row for row, f in zip(correct, fold, strict=True) if f != k], n_models)
        for k in range(folds)
    ]
    return [per_fold[f] for f in fold]


@dataclass(frozen=True)
class DawidSkeneResult:
    answers: list[str | None]  # per question, the most probable true answer
    confidence: list[float]  # its posterior probability (0 where nobody answered)
    accuracy: list[float]  # per model, the estimated share of right answers
    iterations: int


def dawid_skene(
    ballots: Sequence[Ballot], max_iterations: int = 200, tolerance: float = 1e-7, smoothing: float = 0.01
) -> DawidSkeneResult:
    """EM estimate of each question's true answer and each model's confusion matrix.

    Starts from the majority vote (which fixes the labelling), then alternates: class priors and
    confusion matrices from the current posteriors (with `smoothing` pseudo-counts), posteriors from
    them. A question's truth is restricted to the answers some model gave it."""
    import numpy as np  # imported here so that `import kaoshi` stays light

    n_models = len(ballots[0]) if ballots else 0
    labels = sorted({a for ballot in ballots for a in ballot if a is not None})
    if not labels:
        return DawidSkeneResult([None] * len(ballots), [0.0] * len(ballots), [0.0] * n_models, 0)
    index = {label: i for i, label in enumerate(labels)}
    k = len(labels)
    observed = np.zeros((len(ballots), n_models, k))
    for q, ballot in enumerate(ballots):
        for j, answer in enumerate(ballot):
            if answer is not None:
                observed[q, j, index[answer]] = 1.0
    votes = observed.sum(axis=1)  # (questions, labels)
    candidate = votes > 0
    answered = candidate.any(axis=1)
    posterior = np.where(answered[:, None], votes / np.maximum(votes.sum(axis=1, keepdims=True), 1), 0.0)
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported
        prior = (posterior.sum(axis=0) + smoothing) / (posterior.sum() + k * smoothing)
        confusion = np.einsum("qc,qjl->jcl", posterior, observed) + smoothing
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_post = np.log(prior)[None, :] + np.einsum("qjl,jcl->qc", observed, np.log(confusion))
        log_post = np.where(candidate, log_post, -np.inf)
        log_post[~answered] = 0.0
        log_post -= log_post.max(axis=1, keepdims=True)
        updated = np.exp(log_post)
        updated /= updated.sum(axis=1, keepdims=True)
        updated[~answered] = 0.0
        change = float(np.abs(updated - posterior).max())
        posterior = updated
        if change < tolerance:
            break
    best = posterior.argmax(axis=1)
    answers = [labels[int(b)] if answered[q] else None for q, b in enumerate(best)]
    confidence = [float(posterior[q, b]) if answered[q] else 0.0 for q, b in enumerate(best)]
    right = np.einsum("qc,qjc->j", posterior, observed)
    given = observed.sum(axis=(0, 2))
    accuracy = [float(r / g) if g else 0.0 for r, g in zip(right, given, strict=True)]
    return DawidSkeneResult(answers, confidence, accuracy, iterations)
