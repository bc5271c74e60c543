"""C-Eval and C-Eval Hard: 52 subjects in four categories; its leaderboard averages subject accuracies,
and its test answers go to the C-Eval site as a submission file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, Exporter, LoadRequest, PublishedCheck, Specificity
from kaoshi.benchmarks.ceval.loader import CEVAL_STYLE, load_ceval, load_ceval_hub
from kaoshi.benchmarks.ceval.prompts import CEVAL_ANSWER_ONLY, CEVAL_COT
from kaoshi.benchmarks.ceval.subjects import CEVAL_CATEGORIES, CEVAL_HARD_SUBJECTS, CEVAL_SUBJECTS
from kaoshi.benchmarks.common.ceval_layout import claim_in_layout
from kaoshi.benchmarks.common.statistics import CATEGORY_AVERAGES
from kaoshi.data.collect import LoadResult
from kaoshi.results.layout import LeaderboardLayout
from kaoshi.results.subject_layout import AVERAGE

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary
    from kaoshi.store.records import RunRecord, SampleRecord

CEVAL_HUB_ID = "ceval/ceval-exam"
HARD = "Hard"
CATEGORY_OF = dict(CEVAL_STYLE.categories)


def load(request: LoadRequest, *, hard: bool) -> LoadResult:
    """A C-Eval folder (dev/ val/ test/ CSV files) from `request.data`, else the hub copy."""
    name = "ceval-hard" if hard else "ceval"
    if request.data is None:
        chosen = request.subjects or (CEVAL_HARD_SUBJECTS if hard else None)
        return load_ceval_hub(request.split or CEVAL_STYLE.default_split, chosen, CEVAL_HUB_ID, name)
    return load_ceval(request.data, request.split, subjects=request.subjects, hard=hard)


def is_ceval_data(path: Path) -> Specificity | None:
    """A folder (or one file) in C-Eval's layout: by C-Eval's own names when most of its subjects are
    C-Eval's, else by the layout alone (a benchmark published in the layout, FinEval, claims its own
    subjects more specifically)."""
    return claim_in_layout(path, CEVAL_SUBJECTS, owns_layout=True)


def _average_column() -> str:
    return AVERAGE


def hard_average(summary: RunSummary) -> float | None:
    """Mean accuracy over the C-Eval Hard subjects the run has."""
    subjects = summary.groups.get("subject", {})
    values = [
        t.accuracy for name, t in subjects.items() if name in CEVAL_HARD_SUBJECTS and t.accuracy is not None
    ]
    return sum(values) / len(values) if values else None


class CevalLayout(LeaderboardLayout):
    """C-Eval's leaderboard: STEM, Social Science, Humanities, Other, Average and Hard."""

    note = (
        "categories are means of subject accuracies, Average is over all subjects; (n/N): the average "
        "covers n of the N subjects C-Eval averages over"
    )

    @property
    def headline(self) -> str:
        return _average_column()

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        return [*CEVAL_CATEGORIES, _average_column(), HARD]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        found = summary.measurement(CATEGORY_AVERAGES.name)
        averages = found.parts if found is not None else {}
        values: dict[str, float | None] = {c: averages.get(c) for c in (*CEVAL_CATEGORIES, _average_column())}
        values[HARD] = hard_average(summary)
        return values

    def coverage(self, summary: RunSummary) -> dict[str, tuple[int, int]]:
        graded = {name for name, t in summary.groups.get("subject", {}).items() if t.accuracy is not None}
        columns: dict[str, set[str]] = {c: set() for c in CEVAL_CATEGORIES}
        for subject, category in CATEGORY_OF.items():
            columns.setdefault(category, set()).add(subject)
        columns[_average_column()] = set(CEVAL_SUBJECTS)
        columns[HARD] = set(CEVAL_HARD_SUBJECTS)
        return {c: (len(graded & subjects), len(subjects)) for c, subjects in columns.items()}


def write_submission(run: RunRecord, samples: Iterable[SampleRecord], path: Path) -> tuple[str, ...]:
    """The C-Eval test submission JSON of a run on the test split, all 52 subjects."""
    # Late import: the exporter reads the store (sqlite3), which loading C-Eval never needs.
    from kaoshi.benchmarks.ceval.submission import export_ceval_submission

    return export_ceval_submission(run, samples, path)


LAYOUT = CevalLayout()
CEVAL = Benchmark(
    name="ceval",
    description="C-Eval: four-option questions in 52 subjects and four categories (dev, val, test)",
    load=partial(load, hard=False),
    default_prompt="ceval-answer-only",
    detect=is_ceval_data,
    hub_id=CEVAL_HUB_ID,
    categories=CATEGORY_OF,
    leaderboard=LAYOUT,
    metrics=(CATEGORY_AVERAGES,),
    exporters=(Exporter("ceval-submission", "the C-Eval test submission JSON", write_submission),),
    formats="a folder with dev/ val/ test/ <subject>_<split>.csv files, one such file, or the hub",
    splits=("dev", "val", "test"),
    size="13,948: 260 dev + 1,346 val + 12,342 test (test answers withheld)",
    licence="CC BY-NC-SA 4.0",
    published=PublishedCheck(
        repository="hkust-nlp/ceval",
        commit="cba65ae93bcf189149ced9f66ae0c958201faed9",
        official_count="13,948 (data not in the repository)",
        loaded="not checked: the repository holds the code, not the data",
        prompt_parity=(
            "identical on 3,340 FinEval rows and 11,582 CMMLU rows in C-Eval's layout: answer-only "
            "and CoT, 0/5-shot, completion and chat"
        ),
        score_parity="—",
    ),
    templates=(CEVAL_ANSWER_ONLY, CEVAL_COT),
    english_names={s.chinese: s.english for s in CEVAL_SUBJECTS.values()},
)
CEVAL_HARD = Benchmark(
    name="ceval-hard",
    description="C-Eval Hard: the 8 C-Eval subjects of advanced mathematics and sciences",
    load=partial(load, hard=True),
    default_prompt="ceval-answer-only",
    hub_id=CEVAL_HUB_ID,
    categories={subject: CATEGORY_OF[subject] for subject in CEVAL_HARD_SUBJECTS},
    leaderboard=LAYOUT,
    metrics=(CATEGORY_AVERAGES,),
    formats="a C-Eval folder, or the hub (its 8 hard subjects are read)",
    splits=("dev", "val", "test"),
    size="8 of C-Eval's 52 subjects",
    licence="CC BY-NC-SA 4.0",
)
