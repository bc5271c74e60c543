"""The studies the papers run on stored runs: paired comparisons against a baseline, the contamination
check (original vs shuffled options) and voting. Each returns a typed result holding numbers; the CLI
renders them (kaoshi.report)."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from kaoshi.analysis.contamination import (
    GROUPINGS,
    CheckedSample,
    ContaminationRow,
    PairedQuestion,
    checked_sample,
    contamination_row,
    pair_runs,
)
from kaoshi.analysis.contamination import answer_text as answer_text
from kaoshi.analysis.contamination import grouped_rows as contamination_rows
from kaoshi.analysis.outputs import TAIL_CHARS
from kaoshi.analysis.voting import VOTE_METHODS
from kaoshi.api.counting import read_answers
from kaoshi.api.kept import comparison_kind, kept_keys, kept_value
from kaoshi.api.summary import StoreLike, keep_counts, open_store
from kaoshi.bulk import collection_paused
from kaoshi.errors import InputError
from kaoshi.report.compare import ComparedRuns, compare_runs
from kaoshi.report.paired import PairedGroup, PairedRow, bootstrapped, outcomes_of, paired_groups
from kaoshi.results.aggregate import summarize_rows
from kaoshi.runner.vote import VoteOutcome, vote_runs
from kaoshi.store import Coverage, RunRecord, RunSpec, SampleRecord, Store, run_coverage
from kaoshi.store.columns import ScoreRow, score_key_rows
from kaoshi.store.coverage import counted_coverage, key_coverage
from kaoshi.store.pairing import (
    AnswerRow,
    KeyRow,
    conflict_warning,
    graded,
    pair_graded_rows,
    pair_questions,
)
from kaoshi.store.settings import compact_settings

__all__ = [
    "COMPARE_KEYS",
    "Comparison",
    "Contamination",
    "ContaminationRow",
    "PairedQuestion",
    "Vote",
    "answer_text",
    "compare",
    "contamination",
    "vote",
]

Notify = Callable[[str], None]
COMPARE_KEYS = ("domain", "type", "subject", "category", "group")


def _ignore(_: str) -> None:
    """The default `notify`: the result holds the same facts as values."""


@dataclass(frozen=True)
class Comparison:
    """Runs against a baseline (the first) on the questions every run graded with the same content.

    groups: "all" and each grouping -> one PairedRow per group (accuracy per run, paired-bootstrap
    differences from the baseline). differences: per other run, the spec fields that differ from the
    baseline's (field, baseline's value, its value), fingerprint left out."""

    runs: tuple[str, ...]
    questions: int
    coverage: tuple[Coverage, ...]
    conflicts: tuple[str, ...]
    groups: dict[str, list[PairedRow]]
    differences: dict[str, list[tuple[str, Any, Any]]]
    specs: tuple[RunSpec, ...] = ()  # each run's, in the order of `runs`

    def to_json(self) -> dict[str, object]:
        specs = dict(zip(self.runs, self.specs, strict=True)) if self.specs else {}
        return {
            "baseline": self.runs[0],
            "runs": list(self.runs),
            "compared_on": {"questions": self.questions, "runs": len(self.runs), "common": True},
            "coverage": [c.to_json() for c in self.coverage],
            "conflicting_ids": list(self.conflicts),
            "groups": {key: [row.to_json(self.runs) for row in rows] for key, rows in self.groups.items()},
            "settings": {run: compact_settings(spec) for run, spec in specs.items()},
            "specs": {run: spec.to_json() for run, spec in specs.items()},
            "differences": {
                run: [{"field": f, "baseline": old, "run": new} for f, old, new in found]
                for run, found in self.differences.items()
            },
        }


def compare(
    runs: Sequence[str],
    *,
    store: StoreLike = None,
    baseline: str | None = None,
    by: Sequence[str] = ("domain", "type"),
    resamples: int = 10_000,
    notify: Notify = _ignore,
    keep: bool = True,
) -> Comparison:
    """Each run against the baseline (default: the first), overall and per grouping, with paired
    bootstraps on the questions every run graded. `notify` hears of ids that hold other questions.

    What the bootstraps read (each group's accuracies and differences, counted by value) is kept in the
    store and read back while the runs are unchanged (kaoshi.api.kept); `keep` False: read what is
    kept, but write nothing."""
    names = list(dict.fromkeys(runs))
    if baseline:
        names = [baseline, *(n for n in names if n != baseline)]
    if len(names) < 2:
        raise InputError("compare needs at least two runs")
    if resamples < 100:
        raise InputError("--resamples must be at least 100")
    unknown = [key for key in by if key not in COMPARE_KEYS]
    if unknown:
        raise InputError(f"cannot group by {unknown[0]!r} (choose from {', '.join(COMPARE_KEYS)})")
    with open_store(store, read_only=True) as opened:
        records = [opened.get_run(n) for n in names]
        kind = comparison_kind("paired", records)
        keys: list[str | None] = [None, *by]
        kept = kept_value(
            opened,
            kind,
            records,
            lambda: _paired_study(opened, records, keys).to_json(),
            keep=keep,
            usable=lambda value: all((key or "all") in value["groups"] for key in keys),
        )
    study = PairedStudy.from_json(kept)
    warning = conflict_warning(study.conflicts)
    if warning:
        notify(warning)
    groups = {key or "all": [bootstrapped(g, resamples) for g in study.groups[key or "all"]] for key in keys}
    if not groups["all"]:
        raise InputError("the runs share no graded question")
    differences = {
        record.name: [d for d in records[0].spec.differences(record.spec) if d[0] != "fingerprint"]
        for record in records[1:]
    }
    return Comparison(
        runs=tuple(names),
        questions=study.questions,
        coverage=tuple(
            counted_coverage(r, *counts) for r, counts in zip(records, study.coverage, strict=True)
        ),
        conflicts=study.conflicts,
        groups=groups,
        differences=differences,
        specs=tuple(r.spec for r in records),
    )


@dataclass(frozen=True)
class PairedStudy:
    """What `kaoshi compare` counts of its runs before the bootstraps: the questions every run graded,
    each run's coverage counts (answered, graded, errors), the ids holding different questions, and per
    grouping counted ("all" and those asked for) its groups (kaoshi.report.paired.PairedGroup)."""

    questions: int
    coverage: tuple[tuple[int, int, int], ...]
    conflicts: tuple[str, ...]
    groups: dict[str, list[PairedGroup]]

    def to_json(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "coverage": [list(counts) for counts in self.coverage],
            "conflicts": list(self.conflicts),
            "groups": {key: [group.to_json() for group in found] for key, found in self.groups.items()},
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> PairedStudy:
        return cls(
            int(value["questions"]),
            tuple((int(a), int(g), int(e)) for a, g, e in value["coverage"]),
            tuple(value["conflicts"]),
            {key: [PairedGroup.from_json(g) for g in found] for key, found in value["groups"].items()},
        )


def _paired_study(store: Store, records: Sequence[RunRecord], keys: Sequence[str | None]) -> PairedStudy:
    """The runs paired on the questions every run graded, grouped by `keys` (None: all in one group): the
    groups are the first run's, read from its score rows; the others' outcomes from their answer rows
    (read in under half the time of score rows, and paired at C speed), as _scored_study reads them from
    score rows."""
    first = store.score_rows(records[0].name, text_end=0)  # outcomes and groups: no text
    # the others' rows as their writers kept them, where they are the rows there now (kept_keys)
    kept = partial(kept_keys, store, store.summary_signatures(run.name for run in records[1:]))
    with collection_paused():  # the rows hold no cycles: not walked again and again as they are paired
        others = read_answers(store, records[1:], [None] * (len(records) - 1), kept)
        if others is None:  # rows from before the fingerprint column
            samples = [first, *(store.score_rows(r.name, text_end=0) for r in records[1:])]
            return _scored_study(records, samples, keys)
        rows: list[Sequence[KeyRow | AnswerRow]] = [score_key_rows(first), *others]
        pairing = pair_graded_rows(rows)
        by_id = {row.question_id: row for row in first}
        shared = [by_id[question_id] for question_id in pairing.ids]
        outcomes = [list(map(float, map(bool, map(_CORRECT, column)))) for column in pairing.columns]
        coverage = [key_coverage(r, found) for r, found in zip(records, rows, strict=True)]
        return _study(shared, outcomes, coverage, pairing.conflicts, keys)


_CORRECT = operator.itemgetter(3)  # of a key row (store.pairing.KeyRow)


def _scored_study(
    records: Sequence[RunRecord], samples: Sequence[Sequence[ScoreRow]], keys: Sequence[str | None]
) -> PairedStudy:
    """_paired_study from every run's score rows."""
    pairing = pair_questions(samples, keep=graded)
    shared, outcomes = outcomes_of(pairing)
    coverage = [run_coverage(r, s) for r, s in zip(records, samples, strict=True)]
    return _study(shared, outcomes, coverage, pairing.conflicts, keys)


def _study(
    shared: Sequence[ScoreRow],
    outcomes: Sequence[Sequence[float]],
    coverage: Sequence[Coverage],
    conflicts: Sequence[str],
    keys: Sequence[str | None],
) -> PairedStudy:
    return PairedStudy(
        questions=len(shared),
        coverage=tuple((c.answered, c.graded, c.errors) for c in coverage),
        conflicts=tuple(conflicts),
        groups={key or "all": paired_groups(shared, outcomes, key) for key in keys},
    )


@dataclass(frozen=True)
class Contamination:
    """A run on the original exam against one on its shuffled-options variant (the QualBench study).

    overall / groups: accuracy in each order, the drop, the discordant pairs and McNemar's exact p.
    candidates: questions right only in the original order (position-memorised candidates).
    unmapped: shuffled answers that could not be mapped back to the original letters."""

    original: str
    shuffled: str
    pairs: tuple[PairedQuestion, ...]
    coverage: tuple[Coverage, ...]
    conflicts: tuple[str, ...]
    overall: ContaminationRow
    groups: dict[str, list[ContaminationRow]]
    shuffle_seeds: tuple[int | None, int | None]
    unmapped: int

    @property
    def candidates(self) -> list[PairedQuestion]:
        return [p for p in self.pairs if p.memorised_candidate]

    @property
    def runs_in_order(self) -> bool:
        """Whether the first run is unshuffled and the second shuffled, as the study needs."""
        return self.shuffle_seeds[0] is None and self.shuffle_seeds[1] is not None

    def to_json(self) -> dict[str, object]:
        return {
            "original": self.original,
            "shuffled": self.shuffled,
            "compared_on": {"questions": len(self.pairs), "runs": 2, "common": True},
            "coverage": [c.to_json() for c in self.coverage],
            "conflicting_ids": list(self.conflicts),
            "overall": self.overall.to_json(),
            "groups": {key: [r.to_json() for r in rows] for key, rows in self.groups.items()},
            "candidates": [
                {
                    "id": p.question_id,
                    "domain": p.domain,
                    "type": p.qtype,
                    "gold": answer_text(p.gold),
                    "original": answer_text(p.original),
                    "shuffled": answer_text(p.shuffled),
                    "shown": answer_text(p.shown),
                    "old_position": p.old_position,
                }
                for p in self.candidates
            ],
        }


def contamination(
    original: str,
    shuffled: str,
    *,
    store: StoreLike = None,
    by: Sequence[str] | None = None,
    notify: Notify = _ignore,
) -> Contamination:
    """Original vs shuffled-options run: accuracy drop and McNemar's exact test, overall and by group
    (default: every grouping). `notify` hears of conflicting ids, runs given in the wrong order and
    answers that could not be mapped back."""
    keys = list(by or GROUPINGS)
    unknown = [key for key in keys if key not in GROUPINGS]
    if unknown:
        raise InputError(f"cannot group by {unknown[0]!r} (choose from {', '.join(GROUPINGS)})")
    with open_store(store, read_only=True) as opened:
        records = (opened.get_run(original), opened.get_run(shuffled))
        samples = (_checked(opened, original), _checked(opened, shuffled))
    paired = pair_runs(*samples)
    pairs = tuple(paired.pairs)
    warning = conflict_warning(paired.conflicts)
    if warning:
        notify(warning)
    if not pairs:
        raise InputError(f"runs {original!r} and {shuffled!r} share no graded question")
    result = Contamination(
        original=original,
        shuffled=shuffled,
        pairs=pairs,
        coverage=tuple(run_coverage(r, s) for r, s in zip(records, samples, strict=True)),
        conflicts=tuple(paired.conflicts),
        overall=contamination_row("all", pairs),
        groups={key: contamination_rows(pairs, key) for key in keys},
        shuffle_seeds=(records[0].spec.shuffle_seed, records[1].spec.shuffle_seed),
        unmapped=sum(1 for p in pairs if p.shown is not None and p.shuffled is None),
    )
    if not result.runs_in_order:
        notify(
            f"note: {shuffled!r} should be the shuffled run (kaoshi run --shuffle-options SEED); "
            f"seeds recorded: {result.shuffle_seeds[0]}, {result.shuffle_seeds[1]}"
        )
    if result.unmapped:
        notify(f"note: {result.unmapped} shuffled answer(s) could not be mapped back (option texts differ)")
    return result


def _checked(store: Store, run: str) -> list[CheckedSample]:
    """The run's samples as the contamination check keeps them, read one at a time without what it never
    reads (prompts, whole outputs), each with its question's fingerprint as stored (making it from the
    question took most of the check's time)."""
    keys = store.pair_keys(run, None, (), ordered=False)
    stored = {} if keys is None else {row[0]: row[1] for row in keys}
    return [checked_sample(s, stored.get(s.question_id)) for s in store.iter_samples(run, light=True)]


@dataclass(frozen=True)
class Vote:
    """A vote stored as a run of its own (`name`), and how it compares with its members on the questions
    they all answered. `best` is the member with the highest accuracy there; `compared` lists the best
    member first (the baseline), the other members, then the vote."""

    name: str
    members: tuple[str, ...]
    outcome: VoteOutcome
    best: str
    compared: ComparedRuns


def vote(
    runs: Sequence[str],
    *,
    store: StoreLike = None,
    method: str = "majority",
    in_sample: bool = False,
    weights_from: Sequence[str] | None = None,
    run_name: str | None = None,
    by: Sequence[str] = ("domain", "type"),
    notify: Notify = _ignore,
    on_plan: Callable[[int, int], None] | None = None,
    on_sample: Callable[[SampleRecord], None] | None = None,
) -> Vote:
    """Combine the members' stored answers per question (majority, accuracy-weighted, Dawid-Skene) into a
    new run, written to the store; no model is called. Earlier members win ties.

    on_plan(total, 0): the questions to vote, before the first is stored; on_sample: each voted sample as
    it is stored."""
    if method not in VOTE_METHODS:
        raise InputError(f"unknown vote method {method!r} (known: {', '.join(VOTE_METHODS)})")
    if method != "weighted" and (in_sample or weights_from):
        raise InputError("--in-sample and --weights-from are for --method weighted")
    name = run_name or f"vote-{method}"
    with open_store(store) as opened:
        outcome = vote_runs(
            opened,
            list(runs),
            name,
            method,
            in_sample,
            list(weights_from or []) or None,
            on_plan=on_plan,
            on_sample=on_sample,
        )
        keep_counts(opened, name)  # the next `kaoshi report` of the voted run reads them
        # each run as its numbers read it (a small row a sample, its grades not folded in), not its samples
        loaded: list[tuple[RunRecord, Sequence[Any]]] = [
            (opened.get_run(run), opened.score_rows(run, text_end=TAIL_CHARS)) for run in [*runs, name]
        ]
    warning = conflict_warning(outcome.conflicts)
    if warning:
        notify(warning)
    keys = list(by)
    # Members and vote on the questions they all answered: the voted ones, less any a member errored on.
    compared = compare_runs(loaded, lambda run, rows: summarize_rows(run.name, rows, keys))
    members = range(len(runs))
    best = max(members, key=lambda i: compared.summaries[i].overall.accuracy or 0.0)
    ordered = compared.reordered([best, *(i for i in members if i != best), len(runs)])
    return Vote(name, tuple(runs), outcome, runs[best], ordered)
