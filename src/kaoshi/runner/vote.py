"""A vote over stored runs written as a run of its own, so every report, plot and export works on it.

No model is called. The vote covers the objective questions every member holds with the same content
(an id holding another question in some member is left out and reported); the members must have shown
them with the same options in the same order. Each sample's response records every member's answer and
weight.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from kaoshi.analysis.voting import VOTE_METHODS, accuracies, cross_fit_weights, dawid_skene, plurality
from kaoshi.data.model import Exam, Gold, Question, format_gold
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of
from kaoshi.runner.samples import grade_for
from kaoshi.store.pairing import Pairing, conflict_note, pair_questions
from kaoshi.store.records import Method, RunSpec, SampleRecord, SampleStatus
from kaoshi.store.sqlite import Store, StoreError


@dataclass(frozen=True)
class VoteOutcome:
    questions: int
    abstained: int  # questions no member answered
    weights: str  # how the weights were obtained
    seconds: float
    conflicts: tuple[str, ...] = ()  # ids holding different questions in different members: not voted


def answer_key(sample: SampleRecord) -> str | None:
    """The member's vote: its answer as text, or None (abstains) when unreadable or errored."""
    if sample.status not in (SampleStatus.OK, SampleStatus.AMBIGUOUS) or sample.answer is None:
        return None
    return format_gold(sample.answer)


def _shown_alike(first: SampleRecord, other: SampleRecord) -> bool:
    """Asked with the same options in the same order, so the members' letters mean the same thing."""
    return first.question.get("options") == other.question.get("options") and first.gold == other.gold


def _shared_questions(store: Store, members: Sequence[str]) -> Pairing[SampleRecord]:
    """The objective questions every member holds with the same content (first member's order); a member
    that errored abstains."""
    pairing = pair_questions(
        [store.iter_samples(run) for run in members],
        keep=lambda s: kind_of(s.qtype).objective and s.gold is not None,
    )
    for row in pairing.rows:
        for run, other in zip(members[1:], row[1:], strict=True):
            if not _shown_alike(row[0], other):
                raise StoreError(
                    f"question {row[0].question_id!r} is shown with other options or another order in "
                    f"{members[0]!r} and {run!r} (shuffled options?): a vote needs the same questions"
                )
    return pairing


def vote_runs(
    store: Store,
    members: Sequence[str],
    target: str,
    method: str,
    in_sample: bool = False,
    weights_from: Sequence[str] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    on_sample: Callable[[SampleRecord], None] | None = None,
) -> VoteOutcome:
    """Vote `members` into the new run `target`. on_plan(total, 0): the questions to vote, before the first
    is stored; on_sample: each voted sample as it is stored."""
    if method not in VOTE_METHODS:
        raise InputError(f"unknown vote method {method!r} (choose from {', '.join(VOTE_METHODS)})")
    if len(members) < 2:
        raise InputError("a vote needs at least two runs")
    if len(set(members)) != len(members):
        raise InputError("each run may vote once")
    if weights_from is not None and len(weights_from) != len(members):
        raise InputError(f"--weights-from needs one run per member ({len(members)}), got {len(weights_from)}")
    if store.find_run(target) is not None:
        raise StoreError(f"run {target!r} already exists; choose another --run-name")
    records = [store.get_run(run) for run in members]
    started = time.perf_counter()
    pairing = _shared_questions(store, members)
    rows = [list(row) for row in pairing.rows]
    if not rows:
        unpaired = conflict_note(pairing.conflicts)
        raise InputError(
            "the runs share no graded objective question" + (f" ({unpaired})" if unpaired else "")
        )
    ids = [row[0].question_id for row in rows]
    ballots = [[answer_key(s) for s in row] for row in rows]
    correct = [[s.correct if s.status != SampleStatus.ERROR else None for s in row] for row in rows]
    n = len(members)
    weights: list[list[float]] | None = None
    if method == "weighted":
        if weights_from is not None:
            held_out = [
                [s.correct for s in store.iter_samples(run) if s.correct is not None] for run in weights_from
            ]
            fixed = [sum(c) / len(c) if c else 0.5 for c in held_out]
            weights, protocol = [fixed] * len(rows), f"accuracies on {', '.join(weights_from)}"
        elif in_sample:
            weights, protocol = [accuracies(correct, n)] * len(rows), "in-sample accuracies (optimistic)"
        else:
            weights, protocol = cross_fit_weights(ids, correct, n), "cross-fitted accuracies (2 folds)"
    elif method == "dawid-skene":
        protocol = "Dawid-Skene EM, per question type"
    else:
        protocol = "one vote per model"
    winners = _winners(rows, ballots, method, weights)

    first = records[0].spec
    questions = [Question.from_content(row[0].question) for row in rows]
    spec: RunSpec = replace(
        first,
        fingerprint=Exam(target, tuple(questions)).fingerprint,
        n_questions=len(rows),
        prompt="(vote)",
        shots=0,
        model=f"vote:{method}",
        method=Method.VOTE,
        limit=None,
        limit_per_subject=None,
        llm_extractor=None,
        rescored_from=None,
        shuffle_seed=None,
        members=tuple(members),
        model_settings={"vote": method, "weights": protocol},
        # a vote is one answer a question, decoded by no model: none of its first member's decoding
        temperature=0.0,
        top_p=None,
        top_k=None,
        thinking=None,
        repeats=1,
        reused_from=None,
    )
    store.open_run(target, spec)
    if on_plan is not None:
        on_plan(len(rows), 0)
    abstained = 0
    per_question: list[list[float] | None] = list(weights) if weights else [None] * len(rows)
    for row, question, ballot, winner, weight in zip(
        rows, questions, ballots, winners, per_question, strict=True
    ):
        answer = _gold_of(row, winner)
        abstained += winner is None
        grade = grade_for(question, answer, spec)
        response: dict[str, object] = {"votes": dict(zip(members, ballot, strict=True))}
        if weight is not None:
            response["weights"] = dict(zip(members, (round(w, 6) for w in weight), strict=True))
        sample = replace(
            row[0],
            prompt="",
            shots=0,
            status=SampleStatus.OK if winner is not None else SampleStatus.UNPARSED,
            extracted_by="vote",
            extractor_response=None,
            request_key=None,  # a vote is no model's answer to a request: never taken from the cache
            response=json.dumps(response, ensure_ascii=False),
            logprobs=None,
            answer=answer,
            correct=grade.correct,
            score=grade.points,
            latency_s=None,
            tokens_in=None,
            tokens_out=None,
            error=None,
            served_model=None,  # a vote asks no model: the member's routing is the member's
            reasoning=None,  # nor reasons: its response is the ballot
        )
        store.add_sample(target, sample)
        if on_sample is not None:
            on_sample(sample)
    store.finish_run(target)
    return VoteOutcome(len(rows), abstained, protocol, time.perf_counter() - started, pairing.conflicts)


def _winners(
    rows: list[list[SampleRecord]],
    ballots: list[list[str | None]],
    method: str,
    weights: list[list[float]] | None,
) -> list[str | None]:
    if method != "dawid-skene":
        if weights is None:
            return [plurality(b) for b in ballots]
        return [plurality(b, w) for b, w in zip(ballots, weights, strict=True)]
    winners: list[str | None] = [None] * len(rows)
    by_type: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_type.setdefault(row[0].qtype, []).append(i)
    for positions in by_type.values():
        result = dawid_skene([ballots[i] for i in positions])
        for i, answer in zip(positions, result.answers, strict=True):
            winners[i] = answer
    return winners


def _gold_of(row: list[SampleRecord], key: str | None) -> Gold:
    """The member answer whose text is `key` (so the vote stores a real answer value)."""
    if key is None:
        return None
    return next(s.answer for s in row if answer_key(s) == key)
