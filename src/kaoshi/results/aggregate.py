"""Summaries of a run's samples: overall and grouped. Errors and ungraded answers never count as wrong."""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import compress, repeat
from typing import Any

from kaoshi.analysis.estimate import Estimate
from kaoshi.analysis.outputs import OutputProfile
from kaoshi.analysis.stats import exact_sum, wilson_interval
from kaoshi.errors import InputError
from kaoshi.qtypes import kind_of
from kaoshi.results.metric import Measurement, Metric, measure_all
from kaoshi.results.metrics import (
    OBJECTIVE,
    SUBJECTIVE,
    UNKNOWN_GROUP,
    category_averages,
    macro_accuracy,
    qualbench_f1,
    weighted_f1,
)
from kaoshi.results.repeats import RepeatSummary
from kaoshi.results.standard import GroupPoints, SubjectPoints, group_points, subject_points
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


def part_of(sample: SampleRecord | ScoreRow) -> str:
    """Objective (choice and true/false) or subjective (open) question."""
    return OBJECTIVE if kind_of(sample.qtype).objective else SUBJECTIVE


@dataclass(frozen=True)
class Tally:
    """Counts over a set of samples.

    graded: answers with a grade and no error: objective ones checked against the gold answer (unparsed
    answers are graded, as wrong, because the model did answer) and open ones a judge has scored
    (`judged`). An open answer whose judge reply was unparsed is ungraded and earns no points.
    accuracy = correct / checked, over the objective answers only. points / max_points: over every
    sample that has a score; scored counts those, so the points always cover the graded answers.
    f1_qualbench: the QualBench paper's F1 over the checked answers (`summarize` sets it per group).
    truncated: graded answers the backend cut off at the token budget (finish_reason "length").
    """

    n: int = 0
    graded: int = 0
    judged: int = 0
    correct: int = 0
    unparsed: int = 0
    ambiguous: int = 0
    errors: int = 0
    ungraded: int = 0
    scored: int = 0
    points: float = 0.0
    max_points: float = 0.0
    f1_qualbench: float | None = None
    truncated: int = 0

    @property
    def checked(self) -> int:
        """Objective answers checked against the gold answer: the accuracy's denominator."""
        return self.graded - self.judged

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.checked if self.checked else None

    def add(self, sample: SampleRecord) -> Tally:
        return Tally.total([(self._counts(), 1), (_counts(score_row(sample)), 1)])

    @classmethod
    def total(cls, rows: Iterable[tuple[_Counts, int]]) -> Tally:
        """The tally of per-sample counts (`_counts`), each with how many samples have them. Points are
        summed exactly (as fractions, rounded once), so a tally does not depend on the order its samples
        were stored or counted in."""
        rows = list(rows)
        if not rows:
            return cls()
        sums: dict[str, Any] = {}
        for index, (name, zero) in enumerate(_COUNTED):
            if isinstance(zero, float):
                sums[name] = exact_sum((c[index], w) for c, w in rows)
            else:
                sums[name] = sum(c[index] * w for c, w in rows)
        return cls(**sums)

    def _counts(self) -> _Counts:
        return tuple(getattr(self, name) for name, _ in _COUNTED)

    @property
    def points_rate(self) -> float | None:
        """Points earned as a share of the points available over the scored samples."""
        return self.points / self.max_points if self.max_points else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """95% Wilson interval of the accuracy."""
        return wilson_interval(self.correct, self.checked) if self.checked else None

    def to_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "interval": list(self.interval) if self.interval else None,
            "f1_qualbench": self.f1_qualbench,
            "correct": self.correct,
            "graded": self.graded,
            "judged": self.judged,
            "unparsed": self.unparsed,
            "ambiguous": self.ambiguous,
            "errors": self.errors,
            "ungraded": self.ungraded,
            "scored": self.scored,
            "points": self.points,
            "max_points": self.max_points,
            "truncated": self.truncated,
        }


@dataclass(frozen=True)
class RunSummary:
    """A run's tallies, overall and per grouping, with the metrics tables are made of.

    outcomes: (question id, content fingerprint) -> 1.0 / 0.0 for every graded question, for paired
    comparisons between runs (the same id holding another question never pairs).
    parts: objective / subjective tallies (only the parts the exam has), for the LHMKE comparison.
    subject_parts: the same per subject (GAOKAO-Bench weighs each subject's two parts).
    grader: whose grades of open answers were folded in (None: none).
    served_models: model -> samples whose reply a server said came from that model instead of the one
    asked for (a gateway's routing), most first; empty when every reply came from the asked model.
    """

    run: str
    overall: Tally
    groups: dict[str, dict[str, Tally]]
    macro: dict[str, float | None] = field(default_factory=dict)
    weighted_f1: float | None = None
    category_averages: dict[str, float] = field(default_factory=dict)
    subject_points: list[SubjectPoints] = field(default_factory=list)
    group_points: list[GroupPoints] = field(default_factory=list)
    outcomes: dict[QuestionKey, float] = field(default_factory=dict, repr=False)
    parts: dict[str, Tally] = field(default_factory=dict)
    subject_parts: dict[str, dict[str, Tally]] = field(default_factory=dict)
    grader: str | None = None  # whose grades of open answers count (None: no grades)
    # the run's benchmark's own numbers (kaoshi.results.metric), measured by the API for a stored run
    measurements: tuple[Measurement, ...] = ()
    # the statistics over answer strings the run's benchmark reports (results.metrics.ANSWER_STATISTICS);
    # None: a summary made without its benchmark, which shows them all
    statistics: frozenset[str] | None = None
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

    def reports(self, statistic: str) -> bool:
        """Does this run's report show `statistic` (QUALBENCH_F1, WEIGHTED_F1)?"""
        return self.statistics is None or statistic in self.statistics

    @property
    def has_subjective(self) -> bool:
        return SUBJECTIVE in self.parts

    def without_unused_groups(self) -> RunSummary:
        """The summary without the groupings the exam does not use (every sample in `(none)`)."""
        return replace(self, groups={k: t for k, t in self.groups.items() if set(t) != {UNKNOWN_GROUP}})

    def to_json(self) -> dict[str, object]:
        return {
            "run": self.run,
            **self.overall.to_json(),
            "macro_accuracy": self.macro,
            "weighted_f1": self.weighted_f1,
            "category_averages": self.category_averages,
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

    def with_metrics(self, metrics: Iterable[Metric]) -> RunSummary:
        """The summary with the measurements of a benchmark's `metrics` added."""
        return replace(self, measurements=measure_all(metrics, self))


# What one sample adds to each of a Tally's counts, in field order (f1_qualbench aside).
_Counts = tuple[int, int, int, int, int, int, int, int, int, float, float, int]
_COUNTED: tuple[tuple[str, Any], ...] = tuple(
    (f.name, f.default) for f in fields(Tally) if f.name != "f1_qualbench"
)  # (name, zero)


def headline_numbers(summary: RunSummary) -> dict[str, tuple[float, bool]]:
    """The numbers a run is quoted by, by name, each with whether it is a rate (shown as a percentage):
    accuracy, points, macro accuracies, F1s, category averages, subject points and the benchmark's own
    measurements (what a run of k samples averages over its samples)."""
    overall = summary.overall
    numbers: dict[str, tuple[float | None, bool]] = {
        "accuracy": (overall.accuracy, True),
        "points": (overall.points if overall.scored else None, False),
        "points_rate": (overall.points_rate, True),
        "f1_qualbench": (overall.f1_qualbench, True),
        "weighted_f1": (summary.weighted_f1, True),
        **{f"macro_accuracy.{key}": (value, True) for key, value in summary.macro.items()},
        **{f"category_average.{name}": (v, True) for name, v in summary.category_averages.items()},
        **{f"subject_points.{row.subject}": (row.points, False) for row in summary.subject_points},
        # a measurement is a rate where its own text shows one
        **{f"metric.{m.label}": (m.value, m.text.endswith("%")) for m in summary.measurements},
    }
    return {name: (value, rate) for name, (value, rate) in numbers.items() if value is not None}


def _counts(row: ScoreRow) -> _Counts:
    is_error = row.status == SampleStatus.ERROR
    is_checked = not is_error and row.correct is not None
    # An open answer has no `correct`; it is graded once a judge's score has been folded in.
    is_judged = not is_error and row.correct is None and row.score is not None
    is_ungraded = not is_error and not is_checked and not is_judged
    has_score = not is_error and row.score is not None
    return (
        1,
        is_checked + is_judged,
        int(is_judged),
        int(bool(row.correct)),
        int(row.status == SampleStatus.UNPARSED),
        int(row.status == SampleStatus.AMBIGUOUS),
        int(is_error),
        int(is_ungraded),
        int(has_score),
        row.score or 0.0 if has_score else 0.0,
        row.points if has_score else 0.0,
        int(row.truncated and (is_checked or is_judged)),
    )


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
    overall_rows: list[tuple[_Counts, int]] = []
    tallied = {*keys, "subject", "domain"}
    group_rows: dict[str, dict[str, list[tuple[_Counts, int]]]] = {key: {} for key in tallied}
    answer_pairs: Counter[tuple[str, str]] = Counter()
    # (grouping, group name) -> (gold, answer) pair counts, for the F1 of each group
    group_pairs: dict[tuple[str, str], Counter[tuple[str, str]]] = {}
    part_rows: dict[str, list[tuple[_Counts, int]]] = {}
    subject_part_rows: dict[str, dict[str, list[tuple[_Counts, int]]]] = {}
    served: Counter[str] = Counter()
    for row, weight in weighted:
        counts = (_counts(row), weight)
        if row.served_model is not None:
            served[row.served_model] += weight
        overall_rows.append(counts)
        part = part_of(row)
        part_rows.setdefault(part, []).append(counts)
        if row.subject:
            subject_part_rows.setdefault(row.subject, {}).setdefault(part, []).append(counts)
        pair = _answer_pair(row)
        for key in tallied:
            name = GROUP_KEYS[key](row)
            if name is None:
                if key not in keys:
                    continue
                name = UNKNOWN_GROUP
            group_rows[key].setdefault(name, []).append(counts)
            if pair is not None:
                group_pairs.setdefault((key, name), Counter())[pair] += weight
        if pair is not None:
            answer_pairs[pair] += weight
    overall = Tally.total(overall_rows)
    groups = {
        key: {name: Tally.total(rows) for name, rows in table.items()} for key, table in group_rows.items()
    }
    parts = {part: Tally.total(rows) for part, rows in part_rows.items()}
    subject_parts = {
        subject: {part: Tally.total(rows) for part, rows in by_part.items()}
        for subject, by_part in subject_part_rows.items()
    }
    groups = {
        key: {
            name: replace(t, f1_qualbench=qualbench_f1(group_pairs.get((key, name), Counter())))
            for name, t in table.items()
        }
        for key, table in groups.items()
    }
    overall = replace(overall, f1_qualbench=qualbench_f1(answer_pairs))
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
        weighted_f1=weighted_f1(answer_pairs),
        category_averages=category_averages(named["subject"], category_of) if category_of else {},
        subject_points=subjects,
        group_points=group_points(subjects),
        outcomes=outcomes,
        parts={name: parts[name] for name in (OBJECTIVE, SUBJECTIVE) if name in parts},
        subject_parts=dict(sorted(subject_parts.items())),
        served_models=dict(sorted(served.items(), key=lambda item: (-item[1], item[0]))),
    )
