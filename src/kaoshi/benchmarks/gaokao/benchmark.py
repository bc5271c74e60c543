"""GAOKAO-Bench: China's college entrance exam, objective and subjective items, scored in points.

Subject scores and exam totals as the repository's `Bench/merge_OBJ_SUB_score.py` makes them: a subject's
score is its full marks times the weighted scoring rates of its two parts (语文: 0.3 x objective rate +
0.7 x subjective rate of 150; each subject has its weights, in kaoshi.benchmarks.gaokao.subjects), and the
science total (语文, 数学 I, 英语, 物理, 化学, 生物) and the liberal-arts total (语文, 数学 II, 英语, 政治,
历史, 地理) add six subjects, 750 each. A part's scoring rate is its points earned over its points available
(sub-questions and physics' 6 / 3 / 0 included). Physics multi-select is the `partial` multiple-choice
policy at 1/2, this benchmark's default. Subjective items are graded with `kaoshi judge --mode gaokao`.

A run that lacks one part of a subject (only its objective items, or subjective items no judge has graded)
scores that subject on the part it has, and says so: (1/2) beside the cell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, LoadRequest, PublishedCheck
from kaoshi.benchmarks.gaokao.loader import OBJECTIVE_DIR, SUBJECTIVE_DIR, load_gaokao
from kaoshi.benchmarks.gaokao.prompts import GAOKAO, GAOKAO_KAOSHI
from kaoshi.benchmarks.gaokao.subjects import EXAM_TOTALS, GAOKAO_SUBJECTS
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.results.layout import LeaderboardLayout
from kaoshi.results.measurement import Measurement
from kaoshi.results.metric import SummaryMetric
from kaoshi.results.metrics import OBJECTIVE, SUBJECTIVE

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary

SCORING_RATE = "得分率"
TOTAL_NAMES = {"science total": "理科总分", "liberal-arts total": "文科总分"}


def load(request: LoadRequest) -> LoadResult:
    """The repository root, `Data/`, one of its folders or one data file; one split, 'test'."""
    if request.split not in (None, "test"):
        raise DataError(f"GAOKAO-Bench has a single split ('test'), got {request.split!r}")
    if request.data is None:
        raise DataError(
            "GAOKAO-Bench is not on the Hugging Face hub in its published layout: clone "
            "https://github.com/OpenLMLab/GAOKAO-Bench and pass --data PATH (the repository root)"
        )
    return load_gaokao(request.data, subjects=request.subjects)


# A data file's opening: `{"keywords": ..., "example": [` (keys in either order).
_OPENING = re.compile(r'^\s*\{\s*"(?:keywords|example)"\s*:')


def holds_gaokao(path: Path) -> bool:
    """The repository root, `Data/`, one of its two folders, or a JSON file inside one of them or opening
    with GAOKAO-Bench's keys."""
    if path.is_file():
        if path.suffix != ".json":
            return False
        if path.parent.name in (OBJECTIVE_DIR, SUBJECTIVE_DIR):
            return True
        with path.open("rb") as file:  # the opening is enough: a data file can be megabytes
            head = file.read(4096).decode("utf-8-sig", errors="ignore")
        return bool(_OPENING.match(head)) and '"example"' in head and '"keywords"' in head
    if path.name in (OBJECTIVE_DIR, SUBJECTIVE_DIR):
        return True
    data = path / "Data" if (path / "Data").is_dir() else path
    return (data / OBJECTIVE_DIR).is_dir() or (data / SUBJECTIVE_DIR).is_dir()


@dataclass(frozen=True)
class ExamScore:
    """A subject's score on its full marks, or an exam total; `covered` of `of` parts were there (a
    subject's objective and subjective parts; a total's six subjects)."""

    score: float
    full_marks: float
    covered: int
    of: int


def subject_scores(summary: RunSummary) -> dict[str, ExamScore]:
    """Each GAOKAO subject's score: full marks x (objective weight x objective rate + subjective weight x
    subjective rate), over the parts that have scored items (a part alone counts for the whole)."""
    scores = {}
    for subject, parts in summary.subject_parts.items():
        info = GAOKAO_SUBJECTS.get(subject)
        if info is None:
            continue
        weights = {OBJECTIVE: info.objective_weight, SUBJECTIVE: info.subjective_weight}
        rates = {part: tally.points_rate for part, tally in parts.items()}
        present = {part: rate for part, rate in rates.items() if rate is not None and weights.get(part)}
        if not present:
            continue
        weight = sum(weights[part] for part in present)
        rate = sum(weights[part] * value for part, value in present.items()) / weight
        scores[subject] = ExamScore(info.full_marks * rate, info.full_marks, len(present), len(weights))
    return scores


def exam_totals(summary: RunSummary) -> dict[str, ExamScore]:
    """The science and liberal-arts totals: their six subjects' scores added (covered: subjects the run
    has of six; a total over fewer is over those only)."""
    scores = subject_scores(summary)
    totals = {}
    for name, subjects in EXAM_TOTALS.items():
        present = [scores[s] for s in subjects if s in scores]
        if present:
            totals[name] = ExamScore(
                sum(p.score for p in present), sum(p.full_marks for p in present), len(present), len(subjects)
            )
    return totals


@dataclass(frozen=True)
class ExamTotal:
    """A GAOKAO exam total (理科总分 / 文科总分) as a metric of `kaoshi report`: its score of 750, over the
    subjects the run has."""

    total: str  # "science total" or "liberal-arts total"

    @property
    def label(self) -> str:
        return TOTAL_NAMES[self.total]

    def measure(self, summary: RunSummary) -> Measurement | None:
        found = exam_totals(summary).get(self.total)
        if found is None:
            return None
        text = f"{found.score:.1f} / {found.full_marks:g}"
        if found.covered < found.of:
            text += f" (over {found.covered} of its {found.of} subjects)"
        return Measurement(self.label, found.score, text)


def scoring_rate(summary: RunSummary) -> float | None:
    overall = summary.overall
    return overall.points / overall.max_points if overall.max_points else None


GAOKAO_METRICS = (
    ExamTotal("science total"),
    ExamTotal("liberal-arts total"),
    SummaryMetric(f"{SCORING_RATE} (points earned / available)", scoring_rate),
)


_SCORE_COLUMNS = frozenset({*(info.chinese for info in GAOKAO_SUBJECTS.values()), *TOTAL_NAMES.values()})


class GaokaoLayout(LeaderboardLayout):
    """A column per subject (points on its full marks), the two exam totals, and the scoring rate."""

    note = (
        "subjects: on their full marks (语文/数学/英语 150, 物理 110, 化学 100, 生物 90, 政治/历史/地理 "
        "100), weighing objective and subjective scoring rates as merge_OBJ_SUB_score.py does; "
        "理科总分 = 语文+数学(理)+英语+物理+化学+生物, 文科总分 = 语文+数学(文)+英语+政治+历史+地理, "
        "of 750 each; (n/N): a subject over n of its 2 parts, a total over n of its 6 subjects; "
        "得分率: points earned / available"
    )

    @property
    def headline(self) -> str:
        return SCORING_RATE

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        present = {subject for s in summaries for subject in s.subject_parts}
        subjects = [GAOKAO_SUBJECTS[s].chinese for s in GAOKAO_SUBJECTS if s in present]
        totals = sorted({TOTAL_NAMES[t] for s in summaries for t in exam_totals(s)}, reverse=True)
        return [*subjects, *totals, SCORING_RATE]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        values: dict[str, float | None] = {
            GAOKAO_SUBJECTS[s].chinese: score.score for s, score in subject_scores(summary).items()
        }
        values.update({TOTAL_NAMES[t]: total.score for t, total in exam_totals(summary).items()})
        values[SCORING_RATE] = scoring_rate(summary)
        return values

    def coverage(self, summary: RunSummary) -> dict[str, tuple[int, int]]:
        covered = {GAOKAO_SUBJECTS[s].chinese: (x.covered, x.of) for s, x in subject_scores(summary).items()}
        covered.update({TOTAL_NAMES[t]: (x.covered, x.of) for t, x in exam_totals(summary).items()})
        return covered

    def cell_text(self, column: str, value: float | None) -> str | None:
        """Subjects and totals are scores (e.g. 86.5 of 150); other columns are rates."""
        if value is None or column not in _SCORE_COLUMNS:
            return None
        return f"{value:.1f}"


GAOKAO_BENCH = Benchmark(
    name="gaokao-bench",
    description=(
        "GAOKAO-Bench: college entrance exam items 2010-2022, objective and subjective, scored in points "
        "with subject and exam totals"
    ),
    load=load,
    default_prompt="gaokao",
    detect=holds_gaokao,
    categories={subject: "GAOKAO" for subject in GAOKAO_SUBJECTS},
    leaderboard=GaokaoLayout(),
    formats="the repository root (Data/ and Bench/), Data/, one of its two folders or one JSON file",
    splits=("test",),
    size="2,811 items: 1,781 objective + 1,030 subjective (all answers public)",
    licence="Apache-2.0",
    published=PublishedCheck(
        repository="OpenLMLab/GAOKAO-Bench",
        commit="6dbb24f8d8439041e5431c4c184a582182a6ce9c",
        official_count="2,811: 1,781 objective + 1,030 subjective",
        loaded=(
            "2,811; 2 kinds of quirk warned (an option letter glued to the text before it, picture options)"
        ),
        prompt_parity="identical on 2,811 items (system + user as its OpenaiAPI sends them)",
        score_parity=(
            "equal on 7 of 11 reply styles of the 1,781 objective items; differs only where its "
            "reader misreads (last letter, first five A-G, last 10 characters)"
        ),
    ),
    templates=(GAOKAO, GAOKAO_KAOSHI),
    metrics=GAOKAO_METRICS,
)
