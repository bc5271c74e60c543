"""A vote over stored runs written as a run of its own, so every report, plot and export works on it.

No model is called. The vote covers the objective questions every member holds with the same content
(an id holding another question in some member is left out and reported); the members must have shown
them with the same options in the same order. Each sample's response records every member's answer and
weight.
"""

from __future__ import annotations

import json
import operator
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import islice
from typing import NamedTuple

from kaoshi.analysis.voting import VOTE_METHODS, accuracies, cross_fit_weights, dawid_skene, plurality
from kaoshi.data.model import Gold, Question, exam_fingerprint, gold_from_json
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of
from kaoshi.runner.samples import grade_for
from kaoshi.store.columns import answer_text, score_row
from kaoshi.store.opening import IN_MEMORY
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


class VoteRow(NamedTuple):
    """What a vote reads of a member's sample (kaoshi.store.columns.answer_keys): its question's id and
    content fingerprint, its status and outcome, and its answer and gold as stored JSON. A few dozen bytes,
    where the sample is kilobytes: the members of a vote are read as these, and only the first member's
    samples are read again, one at a time, to be written as the vote's."""

    question_id: str
    fingerprint: str
    status: str
    correct: int | None
    score: float | None
    answer: str | None
    gold: str | None
    qtype: str


@lru_cache(maxsize=65536)
def _decoded(stored: str | None) -> Gold:
    """A stored gold or answer (JSON) as the sample holds it."""
    return None if stored is None else gold_from_json(json.loads(stored))


def answer_key(row: VoteRow) -> str | None:
    """The member's vote: its answer as text, or None (abstains) when unreadable or errored."""
    if row.status not in (SampleStatus.OK, SampleStatus.AMBIGUOUS):
        return None
    return answer_text(row.answer)


def vote_rows(store: Store, run: str) -> list[VoteRow]:
    """The run's first samples as a vote reads them, in question order (from the samples, for rows from
    before the fingerprint column)."""
    found = store.answer_keys(run, None, (), ordered=True)
    if found is not None:
        return list(map(VoteRow._make, found))
    return [VoteRow._make(_VOTED(row)) for row in map(score_row, store.iter_samples(run, light=True))]


# What a vote reads of a score row (one made from a sample): a VoteRow's fields, by name.
_VOTED = operator.attrgetter(*VoteRow._fields)


def _shared_questions(store: Store, members: Sequence[str]) -> Pairing[VoteRow]:
    """The objective questions every member holds with the same content (first member's order); a member
    that errored abstains. Each member must have shown them with the same options in the same order:
    its gold the first member's, and its question text the same (where it is another text, its options)."""
    pairing = pair_questions(
        [vote_rows(store, run) for run in members],
        keep=lambda row: kind_of(row.qtype).objective and _decoded(row.gold) is not None,
    )
    unlike = [
        {question_id: (mine, theirs) for question_id, mine, theirs in store.unlike_questions(members[0], run)}
        for run in members[1:]
    ]
    for row in pairing.rows:
        for run, other, texts in zip(members[1:], row[1:], unlike, strict=True):
            if not _shown_alike(row[0], other, texts.get(row[0].question_id)):
                raise StoreError(
                    f"question {row[0].question_id!r} is shown with other options or another order in "
                    f"{members[0]!r} and {run!r} (shuffled options?): a vote needs the same questions"
                )
    return pairing


def _shown_alike(first: VoteRow, other: VoteRow, texts: tuple[str | None, str | None] | None) -> bool:
    """Asked with the same options in the same order, so the members' letters mean the same thing: the same
    gold, and the same question text or, in another text, the same options (`texts`: both questions'
    stored JSON where they are not one text)."""
    if _decoded(first.gold) != _decoded(other.gold):
        return False
    if texts is None:
        return True
    mine, theirs = (json.loads(text) if text else {} for text in texts)
    return bool(mine.get("options") == theirs.get("options"))


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
    is stored; on_sample: each voted sample as it is stored. The members are read as VoteRows; the first
    member's samples are read twice more, one at a time (the questions' fingerprint for the run's spec,
    then each written as the vote's), and the vote is written a few hundred samples a transaction."""
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
    correct = [[_outcome(s) if s.status != SampleStatus.ERROR else None for s in row] for row in rows]
    n = len(members)
    weights: list[list[float]] | None = None
    if method == "weighted":
        if weights_from is not None:
            held_out = [
                [bool(r.correct) for r in vote_rows(store, run) if r.correct is not None]
                for run in weights_from
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
    questions = (Question.from_content(sample.question) for sample in _voted_samples(store, members[0], ids))
    spec: RunSpec = replace(
        first,
        fingerprint=exam_fingerprint(question.fingerprint() for question in questions),
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
    # the run is made under this process's lease: another vote of the same name meanwhile is refused, not
    # resumed (and so never removed by this one's failure)
    lease = store.hold(target)
    try:
        if store.find_run(target) is not None:
            raise StoreError(f"run {target!r} already exists (made meanwhile); choose another --run-name")
        store.open_run(target, spec)
        try:
            if on_plan is not None:
                on_plan(len(rows), 0)
            abstained = _write_vote(
                store, target, spec, members, ids, rows, ballots, winners, weights, on_sample
            )
        except BaseException as exc:
            lease.release()
            told = _forget_partial(store, target, exc)
            if told is exc:
                raise
            raise told from exc
        store.finish_run(target)
    finally:
        lease.release()
    return VoteOutcome(len(rows), abstained, protocol, time.perf_counter() - started, pairing.conflicts)


def _write_vote(
    store: Store,
    target: str,
    spec: RunSpec,
    members: Sequence[str],
    ids: Sequence[str],
    rows: list[list[VoteRow]],
    ballots: list[list[str | None]],
    winners: list[str | None],
    weights: list[list[float]] | None,
    on_sample: Callable[[SampleRecord], None] | None,
) -> int:
    """Write the voted samples to the run `target` (opened), a few hundred a transaction, each reported
    once written; the questions no member answered. The first member's samples are read through a
    connection of their own: a read held open on the writing one would pin its snapshot, and another
    process's commit meanwhile would then refuse every later write of the vote (SQLite's busy snapshot)."""
    abstained = 0
    per_question: list[list[float] | None] = list(weights) if weights else [None] * len(rows)
    with _reading(store) as reader:
        voted = zip(
            _voted_samples(reader, members[0], ids), rows, ballots, winners, per_question, strict=True
        )
        while chunk := list(islice(voted, _WRITTEN_TOGETHER)):
            samples = [_voted_sample(spec, members, *one) for one in chunk]
            store.add_samples(target, samples)
            abstained += sum(winner is None for _, _, _, winner, _ in chunk)
            if on_sample is not None:
                for sample in samples:
                    on_sample(sample)
    return abstained


def _voted_sample(
    spec: RunSpec,
    members: Sequence[str],
    member: SampleRecord,
    row: list[VoteRow],
    ballot: list[str | None],
    winner: str | None,
    weight: list[float] | None,
) -> SampleRecord:
    """The vote's sample of a question: the first member's (`member`) with the winning answer, graded, and
    every member's ballot (and weight) as its response."""
    answer = _gold_of(row, winner)
    grade = grade_for(Question.from_content(member.question), answer, spec)
    response: dict[str, object] = {"votes": dict(zip(members, ballot, strict=True))}
    if weight is not None:
        response["weights"] = dict(zip(members, (round(w, 6) for w in weight), strict=True))
    return replace(
        member,
        prompt="",
        shots=0,
        status=SampleStatus.OK if winner is not None else SampleStatus.UNPARSED,
        extracted_by="vote",
        extractor_response=None,
        extractor_usage=None,  # no extractor read the vote: the member's reading is the member's
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


@contextmanager
def _reading(store: Store) -> Iterator[Store]:
    """A connection of its own to the store's file, read-only (the store itself where it is in memory: no
    other process writes there)."""
    if str(store.path) == IN_MEMORY:
        yield store
        return
    with Store(store.file, read_only=True) as reader:
        yield reader


def _forget_partial(store: Store, target: str, failure: BaseException) -> BaseException:
    """Remove the vote's run, written in part when `failure` stopped it, so that the same vote can be asked
    again; what to raise: `failure`, or where the store refuses (it stays locked) an error saying how to
    remove the run. Its queued samples go unwritten: no model was asked for them."""
    store.drop_queued()
    try:
        store.interrupt_run(target)  # no longer this process's running run: it may go
        store.remove_runs([target])
    except (StoreError, sqlite3.Error) as exc:
        store.drop_queued()
        hint = f"the vote's run {target!r} is written in part and stays ({exc}): kaoshi runs rm {target}"
        if isinstance(failure, Exception):
            return StoreError(f"{failure}; {hint}")
        failure.add_note(hint)
    return failure


# Voted samples a transaction: each written and committed before it is reported (on_sample), where one
# a transaction took a quarter of a vote's time.
_WRITTEN_TOGETHER = 256


def _outcome(row: VoteRow) -> bool | None:
    return None if row.correct is None else bool(row.correct)


def _voted_samples(store: Store, run: str, ids: Sequence[str]) -> Iterator[SampleRecord]:
    """The run's samples of the questions `ids` (in the run's question order, as pairing gives them), read
    one at a time without what the vote replaces (Store.iter_samples light); StoreError where the run's
    questions changed since they were paired."""
    wanted = iter(ids)
    expected = next(wanted, None)
    for sample in store.iter_samples(run, light=True):
        if sample.question_id == expected:
            yield sample
            expected = next(wanted, None)
    if expected is not None:
        raise StoreError(f"run {run!r} changed while it was voted on (question {expected!r}): vote again")


def _winners(
    rows: list[list[VoteRow]],
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


def _gold_of(row: list[VoteRow], key: str | None) -> Gold:
    """The member answer whose text is `key` (so the vote stores a real answer value)."""
    if key is None:
        return None
    return next(_decoded(s.answer) for s in row if answer_key(s) == key)
