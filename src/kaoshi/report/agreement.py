"""The agreement report: every grader of a run's open answers (BLEU, ROUGE, stored judge setups) against
the mean human score, as tables or JSON. Used by `kaoshi agreement` and the HTML report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kaoshi.analysis.agreement import SD_BINS, GraderAgreement, agreement, human_means, sd_histogram
from kaoshi.analysis.correlation import Correlation
from kaoshi.errors import InputError
from kaoshi.report.tables import TextTable
from kaoshi.scoring.text_metrics import TEXT_METRICS, text_scores
from kaoshi.store.records import GradeRecord, SampleRecord


@dataclass(frozen=True)
class AgreementReport:
    run: str
    human: Mapping[str, Mapping[str, float]]  # question id -> scorer -> score
    rows: list[GraderAgreement]

    @property
    def means(self) -> dict[str, float]:
        return human_means(self.human)

    def tables(self) -> list[TextTable]:
        means = self.means
        total = sum(means.values())
        scorers = max(len(s) for s in self.human.values())
        human_row = ["human (mean)", str(len(means)), f"{total:.1f}", f"{total / len(means):.2f}", "", "", ""]
        table = TextTable(
            f"graders of {self.run} against the mean of {scorers} human scorer(s)",
            ("grader", "n", "total", "average", "Pearson [95% CI]", "Spearman [95% CI]", "Kendall τ-b"),
            [human_row, *(_row_text(r) for r in self.rows)],
            note="intervals: Fisher z (Spearman with variance 1.06/(n-3)); grader scores on 0-10",
        )
        histogram = sd_histogram(self.human)
        sd_table = TextTable(
            "inter-annotator standard deviation (questions per bin)",
            ("", *SD_BINS),
            [["questions", *(str(histogram[b]) for b in SD_BINS)]],
        )
        return [table, sd_table]

    def to_json(self) -> dict[str, object]:
        means = self.means
        total = sum(means.values())
        return {
            "human": {"n": len(means), "total": total, "average": total / len(means)},
            "graders": [_row_json(r) for r in self.rows],
            "sd_histogram": sd_histogram(self.human),
        }


def agreement_report(
    run: str,
    samples: Iterable[SampleRecord],
    judged: Mapping[str, Mapping[str, GradeRecord]],
    human: Mapping[str, Mapping[str, float]],
    tokenisation: str = "char",
) -> AgreementReport:
    """`samples`: the run's open answers; `judged`: grader -> question id -> grade. Human scores must be
    for questions among `samples`."""
    samples = list(samples)
    unknown = sorted(set(human) - {s.question_id for s in samples})
    if unknown:
        raise InputError(
            f"human scores for questions that are not open answers of run {run!r}: {', '.join(unknown[:5])}"
        )
    metric_scores: dict[str, dict[str, float]] = {metric: {} for metric in TEXT_METRICS}
    for sample in samples:
        scores = text_scores(sample.response or "", str(sample.gold), tokenisation)
        for metric, by_question in metric_scores.items():
            by_question[sample.question_id] = 10 * scores.get(metric)
    graders = {f"{m} ({tokenisation}) ×10": v for m, v in metric_scores.items()}
    for grader, grades in judged.items():
        graders[grader] = {q: g.score for q, g in grades.items() if g.score is not None}
    means = human_means(human)
    return AgreementReport(run, human, [agreement(name, scores, means) for name, scores in graders.items()])


def _corr_text(c: Correlation) -> str:
    if c.value is None:
        return "—"
    if c.low is None or c.high is None:
        return f"{c.value:.3f}"
    return f"{c.value:.3f} [{c.low:.2f}, {c.high:.2f}]"


def _row_text(r: GraderAgreement) -> list[str]:
    average = "—" if r.average is None else f"{r.average:.2f}"
    kendall = "—" if r.kendall is None else f"{r.kendall:.3f}"
    return [
        r.grader,
        str(r.n),
        f"{r.total:.1f}",
        average,
        _corr_text(r.pearson),
        _corr_text(r.spearman),
        kendall,
    ]


def _row_json(r: GraderAgreement) -> dict[str, object]:
    def corr(c: Correlation) -> dict[str, float | None]:
        return {"value": c.value, "low": c.low, "high": c.high}

    return {
        "grader": r.grader,
        "n": r.n,
        "total": r.total,
        "average": r.average,
        "pearson": corr(r.pearson),
        "spearman": corr(r.spearman),
        "kendall_tau_b": r.kendall,
    }
