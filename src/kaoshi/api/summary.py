"""One way to read a run back: its samples with the judge's grades folded in, and its summary with the
run's standard scores. `kaoshi report` and `kaoshi.evaluate` both read runs through it."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kaoshi.analysis.outputs import TAIL_CHARS, OutputProfile, output_profile
from kaoshi.api.kept import kept_run
from kaoshi.benchmarks import benchmark_names, find_benchmark, get_benchmark
from kaoshi.errors import InputError, UnknownName
from kaoshi.qtypes import kind_of
from kaoshi.results.aggregate import GROUP_KEYS, RunSummary, headline_numbers, summarize_kinds, summarize_rows
from kaoshi.results.grading import StoredSamples, apply_grade_rows, chosen_grader, chosen_grades, load_graded
from kaoshi.results.metric import Metric, measured
from kaoshi.store import (
    Coverage,
    GradeRecord,
    RunRecord,
    RunSpec,
    SampleRecord,
    Store,
    StoreError,
    default_store_path,
    require_store_file,
)
from kaoshi.store.aggregates import RunCounts
from kaoshi.store.columns import ScoreRow, score_row
from kaoshi.store.records import RunStatus, SampleStatus
from kaoshi.store.settings import compact_settings

# What only some runs have is imported where a run has it: k samples a question (kaoshi.results.repeats),
# a sample of the exam (kaoshi.data.subsets, kaoshi.analysis.estimate).
if TYPE_CHECKING:
    from kaoshi.analysis.estimate import Estimate
    from kaoshi.results.repeats import RepeatSummary

StoreLike = Store | str | Path | None
_log = logging.getLogger("kaoshi")
# kaoshi's own exam format (kaoshi JSONL): whose metrics a run of a benchmark kaoshi does not know gets
OWN_FORMAT = "kaoshi"


@dataclass(frozen=True)
class LoadedRun:
    """A stored run: its record (spec, status), its samples (open answers scored by `grader`, the run's
    most recent judge setup unless another is asked for; None when it has no grades)."""

    run: RunRecord
    samples: tuple[SampleRecord, ...]
    grader: str | None
    grades: Mapping[str, GradeRecord] = field(default_factory=dict)  # question id -> the grader's grade
    # a run of k samples a question: each question's samples after its first (sample 1..k-1)
    repeat_samples: tuple[SampleRecord, ...] = ()

    def summarize(
        self,
        by: Iterable[str] | None = None,
        standard_scores: Mapping[str, float] | None = None,
        samples: Iterable[SampleRecord] | None = None,
    ) -> RunSummary:
        """Accuracy overall and per grouping (default: every grouping); `standard_scores` (subject ->
        standard score) over the ones the run recorded; `samples`: only these of the run's (graded)
        samples, e.g. the questions a comparison has in common."""
        return self.scored().summarize(
            by, standard_scores, None if samples is None else map(score_row, samples)
        )

    def scored(self) -> ScoredRun:
        """The run as its numbers read it (the same rows `load_scores` reads from the store)."""
        return ScoredRun(
            self.run,
            tuple(score_row(s, TAIL_CHARS) for s in self.samples),
            self.grader,
            tuple(score_row(s, TAIL_CHARS) for s in self.repeat_samples),
        )


@dataclass(frozen=True)
class ScoredRun:
    """A stored run read for its numbers: one small row a sample (kaoshi.store.columns.ScoreRow: outcome,
    groups, gold and answer as text, token counts; no prompt, question text or whole output), open answers
    scored by `grader` as in LoadedRun. What `kaoshi report`, the leaderboard and the viewer count."""

    run: RunRecord
    rows: tuple[ScoreRow, ...]
    grader: str | None
    # a run of k samples a question: each question's rows after its first (sample 1..k-1)
    repeat_rows: tuple[ScoreRow, ...] = ()

    def summarize(
        self,
        by: Iterable[str] | None = None,
        standard_scores: Mapping[str, float] | None = None,
        rows: Iterable[ScoreRow] | None = None,
    ) -> RunSummary:
        """As LoadedRun.summarize; `rows`: only these of the run's rows (e.g. the questions a comparison
        has in common)."""
        standards = {**self.run.spec.standard_scores, **(standard_scores or {})}
        chosen = self.rows if rows is None else tuple(rows)
        keys = tuple(GROUP_KEYS) if by is None else tuple(by)
        summary = summarize_rows(self.run.name, chosen, counted_groupings(keys, self.run.spec), standards)
        repeats = self._repeats(chosen, keys, standards) if self.run.spec.repeats > 1 else None
        # what the outputs look like: every sample the run generated, or only the chosen ones
        outputs = output_profile((*self.rows, *self.repeat_rows) if rows is None else chosen)
        return completed_summary(summary, self.run, self.grader, outputs, repeats, keys)

    def _repeats(
        self, chosen: Sequence[ScoreRow], keys: Iterable[str], standards: Mapping[str, float]
    ) -> RepeatSummary:
        """The k-sample numbers of the `chosen` questions' samples: pooled over every sample, and each
        sample index summarised as a run of its own (with the benchmark's metrics) and its headline
        numbers averaged."""
        # Late import: only a run of k samples a question reads it (a report of a stored run imports less)
        from kaoshi.results.repeats import by_sample_index, repeat_summary

        k = self.run.spec.repeats
        firsts = list(chosen)
        asked = {row.question_id for row in firsts}
        by_index = [firsts, *by_sample_index(self.repeat_rows, k, asked)]
        metrics = benchmark_metrics(self.run.spec.benchmark)
        numbers = [
            headline_numbers(measured(summarize_rows(self.run.name, rows, list(keys), standards), metrics))
            for rows in by_index
        ]
        common = sorted(set.intersection(*(set(n) for n in numbers)))  # what every sample index has
        if any(not kind_of(row.qtype).objective for row in firsts):
            # Open answers are judged on the first sample only: a number with their points would average
            # a judged sample with unjudged ones. Only the numbers over objective answers are averaged.
            common = [name for name in common if numbers[0][name].objective]
        means = {name: sum(n[name].value for n in numbers) / len(numbers) for name in common}
        rates = frozenset(name for name in common if numbers[0][name].rate)
        per_sample = tuple(n["accuracy"].value if "accuracy" in n else None for n in numbers)
        every = [row for rows in by_index for row in rows]
        return repeat_summary(every, k, per_sample, means, rates)


def benchmark_metrics(benchmark: str) -> tuple[Metric, ...]:
    """The metrics a run of `benchmark` is measured with (Benchmark.metrics); for a benchmark kaoshi does
    not know (an exam built in Python, a run stored by a plugin not installed here), those of kaoshi's own
    exam format, which reports what an exam of any types and groups can (both F1s over answer strings, the
    category averages where subjects have categories)."""
    found = find_benchmark(benchmark) or find_benchmark(OWN_FORMAT)
    return found.metrics if found is not None else ()


def completed_summary(
    summary: RunSummary,
    record: RunRecord,
    grader: str | None,
    outputs: OutputProfile,
    repeats: RepeatSummary | None = None,
    shown: Iterable[str] | None = None,
    *,
    estimated: bool = True,
) -> RunSummary:
    """A stored run's summary with its benchmark's own numbers, what produced it, who graded its open
    answers, its output profile, its k-sample numbers and, for a run of a sample of the exam, the full
    exam's estimated accuracy. `shown`: the groupings asked for, where the summary was counted by more
    (counted_groupings). `estimated` False: a summary of only some of the run's questions (those runs
    compared have in common), which estimates nothing."""
    estimate, note = full_exam_estimate(summary, record.spec) if estimated else (None, "")
    if shown is not None:
        asked = set(shown)
        summary = replace(summary, groups={k: t for k, t in summary.groups.items() if k in asked})
    return replace(
        measured(summary, benchmark_metrics(record.spec.benchmark)),
        grader=grader,
        spec=record.spec,
        repeats=repeats,
        outputs=outputs,
        estimate=estimate,
        estimate_note=note,
    )


def counted_groupings(keys: Iterable[str], spec: RunSpec) -> tuple[str, ...]:
    """The groupings to count a run by: `keys`, and the one its sample of the exam was drawn by (its
    estimate weighs those groups)."""
    chosen = tuple(keys)
    if spec.sample is None:
        return chosen
    # Late import: only a run of a sample of the exam reads it (a report of a stored run imports less)
    from kaoshi.data.subsets import Subset

    try:
        by = Subset.from_json(spec.sample).by
    except InputError:  # full_exam_estimate says so: the run's numbers are still read
        return chosen
    return chosen if by == "all" or by in chosen else (*chosen, by)


def full_exam_estimate(summary: RunSummary, spec: RunSpec) -> tuple[Estimate | None, str]:
    """For a run of a sample of the exam (kaoshi run --sample): the full exam's accuracy estimated from
    the summary's groups (those the sample was drawn by), or why there is none."""
    if spec.sample is None:
        return None, ""
    # Late import: only a run of a sample of the exam reads it (a report of a stored run imports less)
    from kaoshi.analysis.estimate import estimate_accuracy

    # Late import: only a run of a sample of the exam reads it (a report of a stored run imports less)
    from kaoshi.data.subsets import Subset

    try:
        subset = Subset.from_json(spec.sample)
        tallies = {"all": summary.overall} if subset.by == "all" else summary.groups.get(subset.by, {})
        found = {name: (tally.correct, tally.checked) for name, tally in tallies.items()}
        return estimate_accuracy({n: s.counted for n, s in subset.strata.items()}, found), ""
    except InputError as exc:
        return None, f"no estimate of the full exam: {exc}"


def open_store(
    store: StoreLike, *, must_exist: bool = True, read_only: bool = False
) -> AbstractContextManager[Store]:
    """A context for the store given as a Store (left open), a path, or None ($KAOSHI_STORE or the
    default); a missing file is a StoreError naming the stores beside it. `read_only` for readers: they
    then work on a store they cannot write."""
    if isinstance(store, Store):
        return nullcontext(store)
    path = Path(store) if store is not None else default_store_path()
    if must_exist:
        require_store_file(path)
    return Store(path, read_only=read_only)


def load_run(
    run: str, *, store: StoreLike = None, grader: str | None = None, light: bool = False
) -> LoadedRun:
    """A stored run with its grades; StoreError for an unknown run, InputError for an unknown grader.

    store: a path, an open Store, or None for $KAOSHI_STORE or ./kaoshi_runs/kaoshi.sqlite (a run that
    `kaoshi.evaluate` kept in memory is read from its EvalResult instead). `light`: the samples without
    what a summary never reads (the prompts; the model's text but where it was cut off), for numbers."""
    with open_store(store, read_only=True) as opened:
        return read_run(opened, run, grader, light=light)


def read_run(
    store: Store,
    run: str,
    grader: str | None = None,
    samples: list[SampleRecord] | None = None,
    *,
    light: bool = False,
) -> LoadedRun:
    """load_run on an open store; `samples`: the run's stored samples when already read."""
    record = store.get_run(run)
    graded = load_graded(store, run, grader, samples, light=light)
    repeats = tuple(store.iter_repeat_samples(run)) if record.spec.repeats > 1 else ()
    return LoadedRun(record, tuple(graded.samples), graded.grader, graded.grades, repeats)


def load_scores(run: str, *, store: StoreLike = None, grader: str | None = None) -> ScoredRun:
    """A stored run read for its numbers (ScoredRun: no prompt, question text or whole output is read);
    errors as for load_run."""
    with open_store(store, read_only=True) as opened:
        return read_scores(opened, run, grader)


def read_scores(store: Store, run: str, grader: str | None = None) -> ScoredRun:
    """load_scores on an open store."""
    return _scored(store, store.get_run(run), chosen_grader(store, run, grader))


def _scored(store: Store, record: RunRecord, grader: str | None) -> ScoredRun:
    """The run's score rows with the grades of `grader` (already chosen) folded in."""
    run = record.name
    rows = apply_grade_rows(store.score_rows(run, grader, text_end=TAIL_CHARS))
    repeats = store.score_rows(run, repeats=True, text_end=TAIL_CHARS) if record.spec.repeats > 1 else []
    return ScoredRun(record, tuple(rows), grader, tuple(repeats))


def summarize(
    run: str,
    *,
    store: StoreLike = None,
    by: Iterable[str] | None = None,
    grader: str | None = None,
    standard_scores: Mapping[str, float] | None = None,
    outcomes: bool = True,
    keep: bool = False,
) -> RunSummary:
    """A stored run's summary: the numbers of `kaoshi report RUN --format json` (same options); `store` as
    for `load_run`. `outcomes` False: without the per-question outcomes (RunSummary.outcomes, what a
    paired comparison with another run reads), for a summary only shown (a sixth of a report at 100,000
    questions).

    What the run's writer counted of it (kaoshi.evaluate, judge, rescore, merge and vote, as they end:
    keep_counts) is kept in the store and read back while its rows are unchanged (kaoshi.api.kept.kept_run);
    `keep`: keep what this counts too (a reader leaves the store's file as it was)."""
    with open_store(store, read_only=True) as opened:
        return read_summary(
            opened, run, by=by, grader=grader, standard_scores=standard_scores, outcomes=outcomes, keep=keep
        )


def keep_counts(store: Store, run: str) -> None:
    """Count the run as its report does and keep that in the store (kaoshi.api.kept.kept_run), so that the
    next `kaoshi report RUN` reads it: what a command that wrote the run does as it ends (kaoshi.evaluate,
    kaoshi.judge, rescore, merge, vote). Nothing is kept of a run of k samples a question (read from its
    rows each time) or of a store that cannot be written just then, nor of rows a report cannot read: the
    command that wrote them has done its work, and the report says what is wrong with them."""
    record = store.get_run(run)
    if record.spec.repeats == 1:
        try:
            kept_run(store, record, chosen_grader(store, run, None), keep=True)
        except StoreError as exc:
            _log.debug("%s: kept no counts of run %r (%s)", store.path, run, exc)


def read_summary(
    store: Store,
    run: str,
    *,
    by: Iterable[str] | None = None,
    grader: str | None = None,
    standard_scores: Mapping[str, float] | None = None,
    outcomes: bool = True,
    keep: bool = False,
) -> RunSummary:
    """summarize on an open store. A run of one sample a question is counted by SQLite, kind by kind, from
    an index (kaoshi.store.columns.score_kinds), or read from what the store keeps of that count
    (kaoshi.api.kept.kept_run, kept when `keep`): no sample is read into Python but its outcome key.
    Others (k samples a question, rows from before the group column) are summarised from their score rows:
    the same numbers, held equal by the tests. `outcomes` False: a summary only shown, never paired with
    another run's, without its per-question outcomes (RunSummary.outcomes empty)."""
    record = store.get_run(run)
    chosen = chosen_grader(store, run, grader)
    if record.spec.repeats == 1:
        counted = kept_run(store, record, chosen, keep=keep)
        if counted is not None and counted.outputs is not None:
            standards = {**record.spec.standard_scores, **(standard_scores or {})}
            keys = tuple(GROUP_KEYS) if by is None else tuple(by)
            paired = store.outcome_keys(run) if outcomes else {}
            grouping = counted_groupings(keys, record.spec)
            summary = summarize_kinds(run, counted.kinds, paired, grouping, standards)
            return completed_summary(summary, record, chosen, counted.outputs, shown=keys)
    summary = _scored(store, record, chosen).summarize(by, standard_scores)
    return summary if outcomes else replace(summary, outcomes={})


@dataclass(frozen=True)
class RunInfo:
    """One stored run as `kaoshi runs` lists it: its record, how far it got and its accuracy."""

    run: RunRecord
    coverage: Coverage
    # objective answers checked against the gold answer (None: none yet); over every sample (avg@k) for a
    # run of k samples a question
    accuracy: float | None
    # provider batches it waits on (kaoshi run --batch), and the requests in them; None: none
    waiting: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        spec = self.run.spec
        return {
            "run": self.run.name,
            "benchmark": spec.benchmark,
            "model": spec.model,
            "method": spec.method,
            "samples": self.run.n_samples,
            "questions": spec.n_questions,
            "answered": self.coverage.answered,
            "errors": self.coverage.errors,
            "complete": self.coverage.complete,
            "done": self.coverage.short,
            "accuracy": self.accuracy,
            "status": self.run.status,
            "holder": self.run.holder,
            "created": dt.datetime.fromtimestamp(self.run.created_at).isoformat(timespec="seconds"),
            "settings": compact_settings(spec),
            "spec": spec.to_json(),
            **(
                {"waiting_batches": self.waiting[0], "waiting_requests": self.waiting[1]}
                if self.waiting is not None
                else {}
            ),
        }


def runs(*, store: StoreLike = None) -> list[RunInfo]:
    """Every run in the store, oldest first."""
    listed = []
    with open_store(store, read_only=True) as opened:
        # counted by SQLite: no sample is read into Python (a million-sample store lists in a blink)
        counts = opened.run_counts()
        waiting = opened.batches.waiting()
        for record in opened.runs():
            firsts, others = counts.get(record.name, (RunCounts(), RunCounts()))
            spec = record.spec
            asked = spec.asked_questions
            coverage = Coverage(
                record.name,
                asked,
                firsts.answered,
                firsts.graded,
                firsts.errors,
                record.status != RunStatus.FINISHED,
            )
            # a run of k samples a question: its accuracy is over every sample (avg@k)
            checked = firsts.checked + (others.checked if spec.repeats > 1 else 0)
            correct = firsts.correct + (others.correct if spec.repeats > 1 else 0)
            accuracy = correct / checked if checked else None
            listed.append(RunInfo(record, coverage, accuracy, waiting.get(record.name)))
    return listed


def stored_samples(run: str, *, store: StoreLike = None, status: str | None = None) -> list[SampleRecord]:
    """The run's samples as stored (`kaoshi samples RUN`): no judge grades folded in; `status` keeps only
    ok / unparsed / ambiguous / error ones. A run of k samples a question gives every sample, by question
    and sample index."""
    with open_store(store, read_only=True) as opened:
        return list(iter_stored_samples(opened, run, status))


_STATUSES = tuple(status.value for status in SampleStatus)


def iter_stored_samples(store: Store, run: str, status: str | None = None) -> Iterator[SampleRecord]:
    """stored_samples on an open store, one sample at a time, in question (and sample) order."""
    record = store.get_run(run)
    if record.spec.repeats == 1 and (status is None or status in _STATUSES):
        # the status picked by SQLite: the run's other samples are never read
        return store.iter_samples(run, status=None if status is None else SampleStatus(status))
    found = store.iter_all_samples(run) if record.spec.repeats > 1 else store.iter_samples(run)
    return (s for s in found if status in (None, s.status))


def graded_samples(
    run: str, *, store: StoreLike = None, grader: str | None = None, status: str | None = None
) -> list[SampleRecord]:
    """The run's samples (its first a question), with the grades of open answers its report counts folded
    in: `grader`'s, or its most recent judge setup's when None (`kaoshi report RUN --show STATUS`);
    `status`: only the ok / unparsed / ambiguous / error ones, the others never read. InputError for a
    grader that has not graded the run."""
    with open_store(store, read_only=True) as opened:
        opened.get_run(run)
        _, grades = chosen_grades(opened, run, grader)
        if status is not None and status not in _STATUSES:
            raise InputError(f"no sample status {status!r} (statuses: {', '.join(_STATUSES)})")
        picked = None if status is None else SampleStatus(status)
        return list(StoredSamples(opened, run, grades, status=picked))


def export_run(run: str, exporter: str, out: str | Path, *, store: StoreLike = None) -> tuple[str, ...]:
    """Write the file another tool takes (`kaoshi export EXPORTER RUN -o OUT`, e.g. ceval-submission);
    the lines to tell the user (what was written, warnings)."""
    found = {e.name: e for name in benchmark_names() for e in get_benchmark(name).exporters}
    if exporter not in found:
        raise UnknownName(f"unknown export {exporter!r} (known: {', '.join(sorted(found)) or 'none'})")
    with open_store(store, read_only=True) as opened:
        record = opened.get_run(run)
        return found[exporter].write(record, opened.iter_samples(run), Path(out))
