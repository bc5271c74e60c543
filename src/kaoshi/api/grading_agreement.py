"""`kaoshi.agreement`: how well each grader of a run's open answers agrees with human scorers."""

from __future__ import annotations

from pathlib import Path

from kaoshi.analysis.agreement import read_human_scores
from kaoshi.api.summary import StoreLike, open_store
from kaoshi.errors import InputError
from kaoshi.report.agreement import AgreementReport, agreement_report
from kaoshi.runner.judge import judgeable


def agreement(
    run: str, human: str | Path, *, store: StoreLike = None, tokenisation: str = "char"
) -> AgreementReport:
    """Every grader of the run (BLEU, ROUGE with `tokenisation`, and each stored judge setup) against the
    scorers of the `human` CSV (question_id, scorer, score 0-10): correlations and mean differences."""
    human_csv = Path(human)
    scores = read_human_scores(human_csv)
    with open_store(store, read_only=True) as opened:
        opened.get_run(run)
        judged = {grader: opened.grades(run, grader) for grader in opened.graders(run)}
        samples = judgeable(opened.iter_samples(run))
    try:
        return agreement_report(run, samples, judged, scores, tokenisation)
    except ValueError as exc:
        raise InputError(f"{human_csv}: {exc}") from None
