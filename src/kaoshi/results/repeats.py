"""Numbers of a run with k samples a question (kaoshi run --repeats K): avg@k, maj@k, pass@k, consistency.

Over the objective answers (those checked against the gold answer); errors are no sample. Open answers'
repeats are not judged (a judge grades a question's first sample), so they are left out here.
- avg@k: correct samples over graded samples, pooled (the mean of the k samples' accuracies when every
  sample was graded); its interval treats a question's samples as one cluster (a ratio estimator with
  the cluster-robust variance), since a question's samples are not independent of each other.
- maj@k: each question's most frequent answer (every right answer counts as one answer, however it is
  written; an unreadable answer is an answer of its own, "none");
  a tie between answers counts as the share of the tied answers that are right: the expected accuracy
  of breaking the tie at random, so a tie is neither a free win nor a loss.
- pass@k: the unbiased estimator of Chen et al. (2021), 1 - C(n-c, k) / C(n, k) per question with n
  graded samples, c of them right; a question with fewer than k graded samples is left out of pass@k.
- consistency: the mean share of a question's samples that give its most frequent answer (1: the model
  always answers the same); `unanimous` the share of questions whose samples all agree.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from kaoshi.analysis.stats import Z_95
from kaoshi.data.model import format_gold
from kaoshi.store.columns import ScoreRow
from kaoshi.store.records import SampleRecord, SampleStatus

_RIGHT = "\x00right"  # the vote of every right answer (no answer string holds a NUL)


@dataclass(frozen=True)
class QuestionSamples:
    """One question's graded samples: how many, how many right, and the answers given with whether each
    answer is right."""

    n: int
    correct: int
    answers: Counter[str]
    right: frozenset[str]


@dataclass(frozen=True)
class RepeatSummary:
    """The k-sample numbers of a run (see the module's docstring for each definition).

    per_sample: the accuracy of each sample index, in order. means: numbers each computed on every
    sample index as a run of its own and averaged (accuracy, points, macro accuracies, the benchmark's
    own numbers), by name."""

    k: int
    questions: int  # objective questions with at least one graded sample
    samples: int  # their graded samples
    avg_at_k: float | None
    avg_interval: tuple[float, float] | None
    maj_at_k: float | None
    maj_ties: int  # questions whose most frequent answer was a tie
    pass_at_k: dict[int, float]  # k' -> pass@k' (1, 2, 4, ... and k)
    consistency: float | None
    unanimous: float | None
    per_sample: tuple[float | None, ...] = ()
    means: dict[str, float] = field(default_factory=dict)
    rates: frozenset[str] = frozenset()  # the names in `means` that are rates (shown as percentages)

    def to_json(self) -> dict[str, object]:
        return {
            "k": self.k,
            "avg_at_k": self.avg_at_k,
            "avg_at_k_interval": list(self.avg_interval) if self.avg_interval else None,
            "maj_at_k": self.maj_at_k,
            "maj_at_k_ties": self.maj_ties,
            "pass_at_k": self.pass_at_k.get(self.k),
            "pass_at": {str(k): value for k, value in self.pass_at_k.items()},
            "consistency": self.consistency,
            "unanimous": self.unanimous,
            "questions": self.questions,
            "graded_samples": self.samples,
            "per_sample_accuracy": list(self.per_sample),
            "per_sample_means": self.means,
        }


Sampled = TypeVar("Sampled", SampleRecord, ScoreRow)


def by_sample_index(repeats: Iterable[Sampled], k: int, asked: Collection[str]) -> list[list[Sampled]]:
    """The samples after each question's first, one list per sample index 1..k-1, of the `asked`
    questions only (the ones a report or a board compares)."""
    found: list[list[Sampled]] = [[] for _ in range(1, k)]
    for sample in repeats:
        if 0 < sample.sample < k and sample.question_id in asked:
            found[sample.sample - 1].append(sample)
    return found


def by_question(samples: Iterable[SampleRecord | ScoreRow]) -> dict[str, QuestionSamples]:
    """The graded objective samples of each question (question id -> its samples' tally)."""
    answers: dict[str, Counter[str]] = {}
    right: dict[str, set[str]] = {}
    correct: Counter[str] = Counter()
    for sample in samples:
        if sample.status == SampleStatus.ERROR or sample.correct is None:
            continue
        # Every right answer is one answer: it matches the gold, however it is written (a cloze's
        # \frac{1}{2} and 0.5), so right answers never split their vote. Wrong ones vote as written.
        answer = _RIGHT if sample.correct else _answer_text(sample)
        answers.setdefault(sample.question_id, Counter())[answer] += 1
        if sample.correct:
            correct[sample.question_id] += 1
            right.setdefault(sample.question_id, set()).add(answer)
    return {
        qid: QuestionSamples(sum(given.values()), correct[qid], given, frozenset(right.get(qid, ())))
        for qid, given in answers.items()
    }


def _answer_text(sample: SampleRecord | ScoreRow) -> str:
    """The answer as text ("" when none was read)."""
    if isinstance(sample, ScoreRow):
        return sample.answer_text or ""
    return format_gold(sample.answer) if sample.answer is not None else ""


def pass_at(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate of one question from n samples, c of them right (n >= k)."""
    if n - c < k:
        return 1.0
    # 1 - C(n-c, k) / C(n, k) as a product, which never forms the large binomials (Chen et al. 2021)
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def pass_ks(k: int) -> list[int]:
    """The k' pass@k' is given for: 1, 2, 4, ... below k, and k."""
    ks = [1]
    while ks[-1] * 2 < k:
        ks.append(ks[-1] * 2)
    return [*ks, k] if ks[-1] != k else ks


def repeat_summary(
    samples: Iterable[SampleRecord | ScoreRow],
    k: int,
    per_sample: tuple[float | None, ...] = (),
    means: Mapping[str, float] | None = None,
    rates: frozenset[str] = frozenset(),
) -> RepeatSummary:
    """The k-sample numbers of a run's samples (every sample index together)."""
    questions = by_question(samples)
    tallies = list(questions.values())
    n_total = sum(q.n for q in tallies)
    if not tallies or not n_total:
        return RepeatSummary(
            k, 0, 0, None, None, None, 0, {}, None, None, per_sample, dict(means or {}), rates
        )
    avg = sum(q.correct for q in tallies) / n_total
    majority = [_majority(q) for q in tallies]
    passes: dict[int, float] = {}
    for kk in pass_ks(k):
        eligible = [pass_at(q.n, q.correct, kk) for q in tallies if q.n >= kk]
        if eligible:
            passes[kk] = sum(eligible) / len(eligible)
    shares = [max(q.answers.values()) / q.n for q in tallies]
    return RepeatSummary(
        k=k,
        questions=len(tallies),
        samples=n_total,
        avg_at_k=avg,
        avg_interval=cluster_interval(tallies, avg),
        maj_at_k=sum(value for value, _ in majority) / len(tallies),
        maj_ties=sum(tied for _, tied in majority),
        pass_at_k=passes,
        consistency=sum(shares) / len(shares),
        unanimous=sum(share == 1 for share in shares) / len(shares),
        per_sample=per_sample,
        means=dict(means or {}),
        rates=rates,
    )


def _majority(question: QuestionSamples) -> tuple[float, bool]:
    """(the majority answer's credit, whether it was a tie): a tie's credit is the share of the tied
    answers that are right."""
    most = max(question.answers.values())
    tied = [answer for answer, count in question.answers.items() if count == most]
    return sum(answer in question.right for answer in tied) / len(tied), len(tied) > 1


def cluster_interval(questions: list[QuestionSamples], mean: float) -> tuple[float, float] | None:
    """95% interval of a pooled accuracy whose samples come in clusters (a question's k samples): the
    ratio estimator's cluster-robust (sandwich) variance, n/(n-1) * sum((c_q - p n_q)^2) / (sum n_q)^2,
    clipped to [0, 1]. None for a single question (no spread to measure)."""
    if len(questions) < 2:
        return None
    total = sum(q.n for q in questions)
    spread = sum((q.correct - mean * q.n) ** 2 for q in questions)
    variance = len(questions) / (len(questions) - 1) * spread / total**2
    half = Z_95 * math.sqrt(variance)
    return max(0.0, mean - half), min(1.0, mean + half)
