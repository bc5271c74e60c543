"""The numbers several benchmarks' protocols report beyond accuracy, as metrics they declare
(Benchmark.metrics): the QualBench paper's F1, scikit-learn's weighted F1 (CMExam's leaderboard) and
C-Eval's category averages (CMMLU, FinEval and M3KE share them)."""

from __future__ import annotations

from kaoshi.results.metric import AnswerStatistic, CategoryMeans
from kaoshi.results.metrics import CATEGORY_ORDER, pr_f1, weighted_f1
from kaoshi.results.subject_layout import AVERAGE  # the mean over every subject: the leaderboards' too

QUALBENCH_F1 = AnswerStatistic(
    "F1 (QualBench: 2PR/(P+R), weighted P and R)", pr_f1, name="f1_qualbench", column="F1"
)
WEIGHTED_F1 = AnswerStatistic("weighted F1 (scikit-learn average=weighted)", weighted_f1, name="weighted_f1")
CATEGORY_AVERAGES = CategoryMeans(
    AVERAGE,
    CATEGORY_ORDER,
    note="each category is the mean of its subjects' accuracies; Average is over all subjects",
)
# What an exam of any types and groups reports: both F1s, labelled, and the category averages where its
# questions have subjects and categories.
ANSWER_METRICS = (QUALBENCH_F1, WEIGHTED_F1, CATEGORY_AVERAGES)
