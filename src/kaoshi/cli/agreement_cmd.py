"""kaoshi agreement: each grader of a run's open answers against human scorers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kaoshi.analysis.agreement import (
    SD_BINS,
    GraderAgreement,
    agreement,
    human_means,
    read_human_scores,
    sd_histogram,
)
from kaoshi.analysis.correlation import Correlation
from kaoshi.cli.common import add_store_option, open_existing_store
from kaoshi.report.tables import TEXT_FORMATS, TextTable, render_tables
from kaoshi.runner.judge import judgeable
from kaoshi.scoring.text_metrics import TEXT_METRICS, TOKENIZATIONS, text_scores


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "agreement", help="agreement of BLEU, ROUGE and LLM judges with human scores"
    )
    parser.add_argument("run")
    parser.add_argument("--human", type=Path, required=True, help="CSV: question_id, scorer, score (0-10)")
    parser.add_argument("--tokenisation", choices=TOKENIZATIONS, default="char", help="for BLEU / ROUGE")
    parser.add_argument("--format", choices=(*TEXT_FORMATS, "json"), default="table")
    add_store_option(parser)
    parser.set_defaults(handler=agreement_command)


def agreement_command(args: argparse.Namespace) -> int:
    human = read_human_scores(args.human)
    means = human_means(human)
    graders: dict[str, dict[str, float]] = {}
    with open_existing_store(args) as store:
        store.get_run(args.run)
        samples = judgeable(store.iter_samples(args.run))
        unknown = sorted(set(human) - {s.question_id for s in samples})
        if unknown:
            raise ValueError(f"{args.human}: not open answers of run {args.run!r}: {', '.join(unknown[:5])}")
        metric_scores: dict[str, dict[str, float]] = {metric: {} for metric in TEXT_METRICS}
        for sample in samples:
            scores = text_scores(sample.response or "", str(sample.gold), args.tokenisation)
            for metric, by_question in metric_scores.items():
                by_question[sample.question_id] = 10 * scores.get(metric)
        graders.update({f"{m} ({args.tokenisation}) ×10": v for m, v in metric_scores.items()})
        for grader in store.graders(args.run):
            graders[grader] = {
                q: g.score for q, g in store.grades(args.run, grader).items() if g.score is not None
            }
    rows = [agreement(name, scores, means) for name, scores in graders.items()]
    histogram = sd_histogram(human)
    human_total = sum(means.values())
    if args.format == "json":
        document = {
            "human": {"n": len(means), "total": human_total, "average": human_total / len(means)},
            "graders": [_row_json(r) for r in rows],
            "sd_histogram": histogram,
        }
        print(json.dumps(document, ensure_ascii=False, indent=2))
        return 0
    table = TextTable(
        f"graders of {args.run} against the mean of {max(len(s) for s in human.values())} human scorer(s)",
        ("grader", "n", "total", "average", "Pearson [95% CI]", "Spearman [95% CI]", "Kendall τ-b"),
        [
            [
                "human (mean)",
                str(len(means)),
                f"{human_total:.1f}",
                f"{human_total / len(means):.2f}",
                "",
                "",
                "",
            ]
        ]
        + [_row_text(r) for r in rows],
        note="intervals: Fisher z (Spearman with variance 1.06/(n-3)); grader scores on 0-10",
    )
    sd_table = TextTable(
        "inter-annotator standard deviation (questions per bin)",
        ("", *SD_BINS),
        [["questions", *(str(histogram[b]) for b in SD_BINS)]],
    )
    print(render_tables([table, sd_table], args.format))
    return 0


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
