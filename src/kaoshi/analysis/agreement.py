"""How well each grader of open answers agrees with human scorers (the LHMKE comparison).

Graders: BLEU and ROUGE-1/2/L (times 10, to share the humans' 0-10 scale) and every LLM-judge setup
stored with the run. Each is compared with the mean human score per question.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kaoshi.analysis.correlation import Correlation, kendall_tau_b, pearson, spearman
from kaoshi.data.errors import DataError, RowError

HUMAN_COLUMNS = ("question_id", "scorer", "score")
SD_BINS = ("0", "0-1", "1-2", "2-3", "3-4", "4-5", ">5")


def read_human_scores(path: Path) -> dict[str, dict[str, float]]:
    """question id -> scorer -> score (0-10) from a CSV with columns question_id, scorer, score.

    Every bad row is reported with its line and field; a scorer scoring a question twice is an error.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in HUMAN_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(f"{path}:1: missing column(s) {', '.join(missing)} (need {', '.join(HUMAN_COLUMNS)})")
    scores: dict[str, dict[str, float]] = {}
    errors: list[RowError] = []
    for row in reader:
        line = reader.line_num
        question, scorer = (row["question_id"] or "").strip(), (row["scorer"] or "").strip()
        if not question or not scorer:
            errors.append(RowError(str(path), line, "question_id" if not question else "scorer", "empty"))
            continue
        try:
            value = float(row["score"])
        except (TypeError, ValueError):
            errors.append(RowError(str(path), line, "score", f"not a number: {row['score']!r}"))
            continue
        if not 0 <= value <= 10:
            errors.append(RowError(str(path), line, "score", f"must be within 0-10, got {value:g}"))
            continue
        if scorer in scores.get(question, {}):
            errors.append(RowError(str(path), line, "scorer", f"{scorer!r} already scored {question!r}"))
            continue
        scores.setdefault(question, {})[scorer] = value
    if errors:
        raise DataError(f"{path}: {len(errors)} bad row(s)", tuple(errors))
    if not scores:
        raise DataError(f"{path}: no human scores")
    return scores


def population_sd(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def sd_histogram(human: Mapping[str, Mapping[str, float]]) -> dict[str, int]:
    """Questions by the standard deviation of their human scores, in the paper's bins: exactly 0, then
    (0, 1], (1, 2], ... (4, 5], above 5. Questions with a single scorer are left out."""
    counts = dict.fromkeys(SD_BINS, 0)
    for scores in human.values():
        if len(scores) < 2:
            continue
        sd = population_sd(list(scores.values()))
        if sd == 0:
            counts["0"] += 1
        elif sd > 5:
            counts[">5"] += 1
        else:
            upper = math.ceil(sd)
            counts[f"{upper - 1}-{upper}"] += 1
    return counts


@dataclass(frozen=True)
class GraderAgreement:
    grader: str
    n: int  # questions scored by both the grader and at least one human
    total: float
    average: float | None
    pearson: Correlation
    spearman: Correlation
    kendall: float | None


def agreement(grader: str, scores: Mapping[str, float], human_mean: Mapping[str, float]) -> GraderAgreement:
    """The grader's scores (question id -> 0-10) against the mean human score, on shared questions."""
    shared = sorted(set(scores) & set(human_mean))
    x = [scores[q] for q in shared]
    y = [human_mean[q] for q in shared]
    total = sum(x)
    return GraderAgreement(
        grader,
        len(shared),
        total,
        total / len(shared) if shared else None,
        pearson(x, y) if len(shared) >= 2 else Correlation(None),
        spearman(x, y) if len(shared) >= 2 else Correlation(None),
        kendall_tau_b(x, y) if len(shared) >= 2 else None,
    )


def human_means(human: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    return {q: sum(s.values()) / len(s) for q, s in human.items() if s}
