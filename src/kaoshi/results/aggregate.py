"""Summaries of a run's samples: overall and grouped. Errors and ungraded answers never count as wrong."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import compress, repeat
from typing import Any, NamedTuple, TypeVar

from kaoshi.analysis.estimate import Estimate
from kaoshi.analysis.outputs import OutputProfile
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of
from kaoshi.results.measurement import Measurement
from kaoshi.results.metrics import OBJECTIVE, SUBJECTIVE, UNKNOWN_GROUP, macro_accuracy
from kaoshi.results.repeats import RepeatSummary
from kaoshi.results.standard import GroupPoints, SubjectPoints, group_points, subject_points
from kaoshi.results.tally import Counts, Tally, rows_counts
from kaoshi.store.columns import Kind, ScoreRow, score_row
from kaoshi.store.pairing import QuestionKey
from kaoshi.store.records import RunSpec, SampleRecord, SampleStatus
from kaoshi.store.settings import compact_settings

GROUP_KEYS: dict[str, Callable[[SampleRecord | ScoreRow], Any]] = {
    "domain": lambda s: s.domain,
    "type": lambda s: s.qtype,
    "subject": lambda s: s.subject,
    "category": lambda s: s.category,
    "group": lambda s: s.group if isinstance(s, ScoreRow) else s.question.get("group"),
}
# GROUP_KEYS of a summary's own rows (ScoreRow, a named tuple): each grouping's field, read at C speed
_ROW_GROUPS: dict[str, Callable[[ScoreRow], Any]] = {
    key: operator.itemgetter(ScoreRow._fields.index(name))
    for key, name in (
        ("domain", "domain"),
        ("type", "qtype"),
        ("subject", "subject"),
        ("category", "category"),
        ("group", "group"),
    )
}
# What a summary groups a row by: each of GROUP_KEYS's fields, its type telling its part too.
_GROUPED = operator.itemgetter(
    *(ScoreRow._fields.index(name) for name in ("qtype", "subject", "domain", "category", "group"))
)


def part_of(sample: SampleRecord | ScoreRow) -> str:
    """Objective (choice and true/false) or subjective (open) question."""
    return OBJECTIVE if kind_of(sample.qtype).objective else SUBJECTIVE


@dataclass(frozen=True)
class SampleKinds:
    """A run's samples as columns, counted by kind: what a benchmark's metrics compute from
    (kaoshi.results.metric reads them from RunSummary.kinds). Each row is a kind of sample: the samples
    agreeing on everything a summary tallies (type, groups, status, outcome, score, points, gold and answer;
    its question id is one of theirs where the store counted it, else empty), with `weights` saying how
    many samples are of it, in the order first met. `category_of`: each subject's category, as its last
    sample has it."""

    rows: tuple[ScoreRow, ...] = ()
    weights: tuple[int, ...] = ()
    category_of: Mapping[str, str] = field(default_factory=dict)

    def __iter__(self) -> Iterator[tuple[ScoreRow, int]]:
        return zip(self.rows, self.weights, strict=True)

    @cached_property
    def _pairs(self) -> tuple[tuple[str, str] | None, ...]:
        """Each row's (gold, answer) as _answer_pair reads it: read once for the run and every grouping
        (read again for each, they were a fifth of a report of a kept run)."""
        return tuple(map(_answer_pair, self.rows))

    def answer_pairs(self) -> Counter[tuple[str, str]]:
        """(gold, answer) as strings for every checked objective answer (unreadable: ""), counted."""
        return _counted_pairs(zip(self._pairs, self.weights, strict=True))

    def answer_pairs_by(self, grouping: str) -> dict[str, Counter[tuple[str, str]]]:
        """answer_pairs within each group of `grouping` (a GROUP_KEYS name; samples without one in
        `(none)`)."""
        weighed = _weighed(map(_ROW_GROUPS[grouping], self.rows), self._pairs, self.weights, UNKNOWN_GROUP)
        return {name: Counter(pairs) for name, pairs in weighed.items()}

    def tallies_by(self, grouping: str) -> dict[str, Tally]:
        """A tally of each named group of `grouping` (samples without one left out)."""
        weighed = _weighed(map(_ROW_GROUPS[grouping], self.rows), rows_counts(self.rows), self.weights)
        return {name: Tally.total(by_counts.items()) for name, by_counts in weighed.items()}


@dataclass(frozen=True)
class RunSummary:
    """A run's tallies, overall and per grouping, with the metrics tables are made of.

    outcomes: (question id, content fingerprint) -> 1.0 / 0.0 for every graded question, for paired
    comparisons between runs (the same id holding another question never pairs).
    parts: objective / subjective tallies (only the parts the exam has), for the LHMKE comparison.
    subject_parts: the same per subject (GAOKAO-Bench weighs each subject's two parts).
    grader: whose grades of open answers were folded in (None: none).
    measurements: the run's benchmark's own numbers (kaoshi.results.metric.measured), computed from
    `kinds`, the samples the summary was made from as columns.
    served_models: model -> samples whose reply a server said came from that model instead of the one
    asked for (a gateway's routing), most first; empty when every reply came from the asked model.
    """

    run: str
    overall: Tally
    groups: dict[str, dict[str, Tally]]
    macro: dict[str, float | None] = field(default_factory=dict)
    subject_points: list[SubjectPoints] = field(default_factory=list)
    group_points: list[GroupPoints] = field(default_factory=list)
    outcomes: dict[QuestionKey, float] = field(default_factory=dict, repr=False)
    parts: dict[str, Tally] = field(default_factory=dict)
    subject_parts: dict[str, dict[str, Tally]] = field(default_factory=dict)
    grader: str | None = None  # whose grades of open answers count (None: no grades)
    measurements: tuple[Measurement, ...] = ()
    # what produced the numbers (None: a summary of samples alone); JSON reports carry it whole
    spec: RunSpec | None = None
    served_models: dict[str, int] = field(default_factory=dict)
    # a run of k samples a question: its k-sample numbers (the rest of the summary is its first sample's)
    repeats: RepeatSummary | None = None
    # what the outputs look like (kaoshi.analysis.outputs), added by the API for a stored run like `spec`
    outputs: OutputProfile | None = None
    # a run of a sample of the exam (kaoshi run --sample): the full exam's accuracy estimated from it
    # (kaoshi.analysis.estimate), added by the API with `spec`; or why there is none
    estimate: Estimate | None = None
    estimate_note: str = ""
    kinds: SampleKinds = field(default_factory=SampleKinds, compare=False, repr=False)

    @property
    def has_subjective(self) -> bool:
        return SUBJECTIVE in self.parts

    def measurement(self, name: str) -> Measurement | None:
        """The benchmark's measurement named `name` among the run's numbers (Measurement.number_name)."""
        return next((m for m in self.measurements if m.number_name == name), None)

    def number(self, name: str) -> float | None:
        """The value of the measurement named `name`, None where the run has none."""
        found = self.measurement(name)
        return None if found is None else found.value

    def without_unused_groups(self) -> RunSummary:
        """The summary without the groupings the exam does not use (every sample in `(none)`)."""
        return replace(self, groups={k: t for k, t in self.groups.items() if set(t) != {UNKNOWN_GROUP}})

    def to_json(self) -> dict[str, object]:
        return {
            "run": self.run,
            **self.overall.to_json(),
            "macro_accuracy": self.macro,
            "subject_points": [row.to_json() for row in self.subject_points],
            "group_points": [row.to_json() for row in self.group_points],
            "parts": {
                name: {**tally.to_json(), "points_rate": tally.points_rate}
                for name, tally in self.parts.items()
            },
            "groups": {
                key: {name: tally.to_json() for name, tally in table.items()}
                for key, table in self.groups.items()
            },
            "subject_parts": {
                subject: {
                    part: {**tally.to_json(), "points_rate": tally.points_rate}
                    for part, tally in table.items()
                }
                for subject, table in self.subject_parts.items()
            },
            **({"graded_by": self.grader} if self.grader else {}),
            **(
                {"settings": compact_settings(self.spec), "spec": self.spec.to_json()}
                if self.spec is not None
                else {}
            ),
            **(
                {"benchmark_metrics": {m.label: m.to_json() for m in self.measurements}}
                if self.measurements
                else {}
            ),
            # only when some reply came from another model: reports of every other run stay as they were
            **({"served_models": self.served_models} if self.served_models else {}),
            # only for a run of k samples a question: k, avg_at_k, maj_at_k, pass_at_k and the rest
            **(self.repeats.to_json() if self.repeats is not None else {}),
            **({"outputs": self.outputs.to_json()} if self.outputs is not None else {}),
            **({"estimate": self.estimate.to_json()} if self.estimate is not None else {}),
            **({"estimate_note": self.estimate_note} if self.estimate_note else {}),
        }


class Number(NamedTuple):
    """One of the numbers a run is quoted by: its value, whether it is a rate (shown as a percentage) and
    whether it is counted over the objective answers alone (no judge's points)."""

    value: float
    rate: bool
    objective: bool


def headline_numbers(summary: RunSummary) -> dict[str, Number]:
    """The numbers a run is quoted by, by name: accuracy, points, macro accuracies, subject points and the
    benchmark's own measurements with their named values (what a run of k samples averages over its
    samples)."""
    overall = summary.overall
    numbers: dict[str, tuple[float | None, bool, bool]] = {
        "accuracy": (overall.accuracy, True, True),
        "points": (overall.points if overall.scored else None, False, False),
        "points_rate": (overall.points_rate, True, False),
        **{m.number_name: (m.value, m.rate, m.objective) for m in summary.measurements},
        **{f"macro_accuracy.{key}": (value, True, True) for key, value in summary.macro.items()},
        **{
            f"{m.number_name}.{part}": (v, m.rate, m.objective)
            for m in summary.measurements
            for part, v in m.parts.items()
        },
        **{f"subject_points.{row.subject}": (row.points, False, False) for row in summary.subject_points},
    }
    return {
        name: Number(value, rate, objective)
        for name, (value, rate, objective) in numbers.items()
        if value is not None
    }


def _answer_pair(row: ScoreRow) -> tuple[str, str] | None:
    """(gold, answer) as strings for a checked objective answer (unreadable: ""), else None."""
    if row.status == SampleStatus.ERROR or row.correct is None:
        return None
    return row.gold_text, row.answer_text or ""


# What a summary tallies of a row: all of it but which question and sample it is (rows that agree on these
# are counted together, with their number as the weight).
_Tallied = tuple[Any, ...]


_tallied: Callable[[ScoreRow], _Tallied] = operator.itemgetter(slice(2, 15))  # qtype .. served_model
_KEY = operator.itemgetter(0, 1)  # (question id, fingerprint)
_STATUS = operator.itemgetter(7)
_CORRECT = operator.itemgetter(8)


def summarize(
    run: str,
    samples: Iterable[SampleRecord],
    group_by: Iterable[str] = tuple(GROUP_KEYS),
    standards: Mapping[str, float] | None = None,
) -> RunSummary:
    """Tally a run's samples (as summarize_rows does their rows)."""
    return summarize_rows(run, (score_row(sample) for sample in samples), group_by, standards)


def summarize_rows(
    run: str,
    rows: Iterable[ScoreRow],
    group_by: Iterable[str] = tuple(GROUP_KEYS),
    standards: Mapping[str, float] | None = None,
) -> RunSummary:
    """Tally a run's rows (kaoshi.store.columns: open answers' grades already folded in). Macro accuracies
    are over subjects and domains whether or not they are among `group_by`; `standards` (subject ->
    standard score) scales each subject's points."""
    keys = _checked_keys(group_by)
    # Rows that agree on everything tallied are counted once, with their number as the weight: a run of
    # 100,000 questions has a few thousand such kinds of row, and each grouping adds those up (a Tally a
    # sample a group, made one by one, took most of the time of summarizing thousands of samples).
    rows = rows if isinstance(rows, (list, tuple)) else list(rows)
    kinds = Counter(map(_tallied, rows))  # in the order first met: a subject's group is its first sample's
    weighted = [(ScoreRow("", "", *kind), weight) for kind, weight in kinds.items()]
    # the checked answers, picked and keyed at C speed (a comprehension took half of summarising a run)
    correct = list(map(_CORRECT, rows))
    checked = list(
        compress(
            rows,
            map(
                operator.and_,
                map(operator.is_not, correct, repeat(None)),
                map(operator.ne, map(_STATUS, rows), repeat(SampleStatus.ERROR)),
            ),
        )
    )
    outcomes: dict[QuestionKey, float] = dict(
        zip(map(_KEY, checked), map(float, map(_CORRECT, checked)), strict=True)
    )
    category_of = {row.subject: row.category for row in rows if row.subject and row.category}
    return _summarize_weighted(run, weighted, outcomes, category_of, keys, standards)


def summarize_kinds(
    run: str,
    kinds: Sequence[Kind],
    outcomes: dict[QuestionKey, float],
    group_by: Iterable[str] = tuple(GROUP_KEYS),
    standards: Mapping[str, float] | None = None,
) -> RunSummary:
    """summarize_rows over a run's samples counted by kind in the store (kaoshi.store.columns.score_kinds,
    in the order first met) with its `outcomes` (outcome_keys): the same summary."""
    keys = _checked_keys(group_by)
    weighted = [(kind.row, kind.samples) for kind in kinds]
    # a subject's category is its last sample's, as summarize_rows reads it
    category_of = {
        kind.row.subject: kind.row.category
        for kind in sorted(kinds, key=lambda kind: kind.last)
        if kind.row.subject and kind.row.category
    }
    return _summarize_weighted(run, weighted, outcomes, category_of, keys, standards)


Item = TypeVar("Item")


def _counted_pairs(pairs: Iterable[tuple[tuple[str, str] | None, int]]) -> Counter[tuple[str, str]]:
    """The (gold, answer) pairs, each with its number of samples, added up (None: no checked answer)."""
    counted: dict[tuple[str, str], int] = {}
    for pair, weight in pairs:
        if pair is not None:
            counted[pair] = counted.get(pair, 0) + weight
    return Counter(counted)


def _weighed(
    names: Iterable[Any], items: Iterable[Item | None], weights: Iterable[int], none_as: str | None = None
) -> dict[Any, dict[Item, int]]:
    """Each name's items with their weights added up by item, names and items in the order first met (an
    item None adds nothing to its name's); a name None goes under `none_as`, or nowhere when that is None."""
    found: dict[Any, dict[Item, int]] = {}
    for name, item, weight in zip(names, items, weights, strict=True):
        if name is None:
            if none_as is None:
                continue
            name = none_as
        bucket = found.get(name)
        if bucket is None:
            bucket = found[name] = {}
        if item is not None:
            bucket[item] = bucket.get(item, 0) + weight
    return found


def _checked_keys(group_by: Iterable[str]) -> list[str]:
    keys = list(group_by)
    unknown = [k for k in keys if k not in GROUP_KEYS]
    if unknown:
        raise InputError(f"cannot group by {unknown[0]!r} (choose from {', '.join(GROUP_KEYS)})")
    return keys


def _summarize_weighted(
    run: str,
    weighted: list[tuple[ScoreRow, int]],
    outcomes: dict[QuestionKey, float],
    category_of: dict[str, str],
    keys: list[str],
    standards: Mapping[str, float] | None,
) -> RunSummary:
    """The summary of rows counted by kind (each with its number of samples, in the order first met)."""
    kinds = tuple(row for row, _ in weighted)
    weights = tuple(weight for _, weight in weighted)
    # A run's thousands of kinds of row are a hundred or so once only what a tally reads tells them apart:
    # their groups and the counts they add. Each grouping is tallied from those, a row of each standing
    # for the others (a pass over every kind of row for each grouping was a tenth of a report of a kept
    # run); groups come in the order their first rows do, as they would from every row.
    alike: dict[tuple[tuple[Any, ...], Counts], tuple[ScoreRow, int]] = {}
    for row, grouped, counted, weight in zip(
        kinds, map(_GROUPED, kinds), rows_counts(kinds), weights, strict=True
    ):
        first, added = alike.get((grouped, counted), (row, 0))
        alike[grouped, counted] = (first, added + weight)
    rows = [row for row, _ in alike.values()]
    counts = [counted for _, counted in alike]
    samples = [weight for _, weight in alike.values()]
    parts_of = [part_of(row) for row in rows]

    def tallies(names: Iterable[Any], none_as: str | None = None) -> dict[Any, Tally]:
        weighed = _weighed(names, counts, samples, none_as)
        return {name: Tally.total(by_counts.items()) for name, by_counts in weighed.items()}

    overall = Tally.total(zip(counts, samples, strict=True))
    groups = {
        key: tallies(map(_ROW_GROUPS[key], rows), UNKNOWN_GROUP if key in keys else None)
        for key in {*keys, "subject", "domain"}
    }
    parts = tallies(parts_of)
    subject_parts: dict[str, dict[str, Tally]] = {}
    subject_of = (
        (row.subject, part) if row.subject else None for row, part in zip(rows, parts_of, strict=True)
    )
    for (subject, part), tally in tallies(subject_of).items():
        subject_parts.setdefault(subject, {})[part] = tally
    served: Counter[str] = Counter()
    for row, weight in weighted:
        if row.served_model is not None:
            served[row.served_model] += weight
    named = {
        key: {n: t for n, t in groups[key].items() if n != UNKNOWN_GROUP} for key in ("subject", "domain")
    }
    macro = {key: macro_accuracy(table) for key, table in named.items() if table}
    subjects = subject_points(weighted, standards or {})
    return RunSummary(
        run,
        overall,
        {key: dict(sorted(groups[key].items())) for key in keys},
        macro=macro,
        subject_points=subjects,
        group_points=group_points(subjects),
        outcomes=outcomes,
        parts={name: parts[name] for name in (OBJECTIVE, SUBJECTIVE) if name in parts},
        subject_parts=dict(sorted(subject_parts.items())),
        kinds=SampleKinds(kinds, weights, category_of),
        served_models=dict(sorted(served.items(), key=lambda item: (-item[1], item[0]))),
    )
