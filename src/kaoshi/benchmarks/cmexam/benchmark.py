"""CMExam: questions from the Chinese National Medical Licensing Examination, single and multi-answer.

Its metrics are accuracy and weighted F1 (BLEU / ROUGE on the explanations are not computed here). The
default prompt is `cmexam`, the zero-shot prompt CMExam's repository evaluates chat models with
(prompts.py); kaoshi's own `default` (exemplars, an answer cue) is the alternative. Single and
multi-answer questions are told apart by their gold answer, as CMExam's script does, so the prompt tells a
model how many answers to give.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kaoshi.benchmarks.base import Benchmark, LoadRequest, PublishedCheck
from kaoshi.benchmarks.cmexam.loader import CMEXAM_FILES, holds_cmexam, load_cmexam
from kaoshi.benchmarks.cmexam.prompts import CMEXAM as CMEXAM_PROMPT
from kaoshi.benchmarks.common.statistics import WEIGHTED_F1
from kaoshi.data.collect import LoadResult
from kaoshi.data.errors import DataError
from kaoshi.results.layout import ACCURACY, LeaderboardLayout
from kaoshi.results.metrics import UNKNOWN_GROUP

if TYPE_CHECKING:
    from kaoshi.results.aggregate import RunSummary

WEIGHTED_F1_COLUMN = "weighted F1"


def load(request: LoadRequest) -> LoadResult:
    """One split of a local CMExam copy; CMExam is read from `--data` only."""
    if request.data is None:
        raise DataError(
            "cmexam reads a local copy: give --data PATH (the CMExam repository, its data/ folder, or one "
            "of its CSV files such as test_with_annotations.csv)"
        )
    return load_cmexam(request.data, request.split)


class CmexamLayout(LeaderboardLayout):
    """Accuracy, weighted F1, then accuracy per Medical Discipline (the test file's annotation)."""

    note = (
        "weighted F1: F1 per gold answer string (A, ABCE, …) weighted by how often it is the gold answer "
        "(scikit-learn's average='weighted'); a column per Medical Discipline where the data has them"
    )

    def columns(self, summaries: Sequence[RunSummary]) -> list[str]:
        return [ACCURACY, WEIGHTED_F1_COLUMN, *_disciplines(summaries)]

    def values(self, summary: RunSummary) -> dict[str, float | None]:
        values: dict[str, float | None] = {
            name: tally.accuracy for name, tally in summary.groups.get("subject", {}).items()
        }
        values[ACCURACY] = summary.overall.accuracy
        values[WEIGHTED_F1_COLUMN] = summary.number(WEIGHTED_F1.name)
        return values


def _disciplines(summaries: Sequence[RunSummary]) -> list[str]:

    named = {name for s in summaries for name in s.groups.get("subject", {})}
    return sorted(named - {UNKNOWN_GROUP, ACCURACY, WEIGHTED_F1_COLUMN})


CMEXAM = Benchmark(
    name="cmexam",
    metrics=(WEIGHTED_F1,),  # the weighted F1 its leaderboard reports
    description="CMExam: Chinese medical licensing exam questions, single and multi-answer, five annotations",
    load=load,
    default_prompt="cmexam",
    detect=holds_cmexam,
    leaderboard=CmexamLayout(),
    formats=(
        "the CMExam repository, its data/ folder, or one of "
        + ", ".join(CMEXAM_FILES.values())
        + " (Question, Options one per line, Answer, Explanation)"
    ),
    splits=tuple(CMEXAM_FILES),
    size="68,119: 54,497 train + 6,811 val + 6,811 test, all with answers",
    licence="see the CMExam repository (not stated in kaoshi's reference)",
    published=PublishedCheck(
        repository="williamliujl/CMExam",
        commit="fadb22c89beb1b7115dc36460ba792eb96b7b972",
        official_count="68,119: 54,497 + 6,811 + 6,811",
        loaded="not checked: the CSVs are not in the repository snapshot (git LFS)",
        prompt_parity="not checked (no real rows)",
        score_parity="—",
    ),
    templates=(CMEXAM_PROMPT,),
)
