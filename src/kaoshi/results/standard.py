"""Exam-style points: each subject's points scaled to its standard score (LHMKE), and group totals."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kaoshi.analysis.stats import exact_sum
from kaoshi.errors import InputError
from kaoshi.option_fields import cli

if TYPE_CHECKING:  # a type only: importing the store for it would make RunConfig's option parsing import it
    from kaoshi.store.columns import ScoreRow


@dataclass(frozen=True)
class SubjectPoints:
    """Points earned in one subject, over the questions that have been scored.

    `scored` < `questions` means some questions (errors, open questions nobody graded yet) are not in
    the total, and the scaled score covers only the scored part of the paper.
    """

    subject: str
    group: str | None
    points: float
    max_points: float
    scored: int
    questions: int
    standard: float | None

    @property
    def scaled(self) -> float | None:
        """Points on the subject's standard scale, e.g. 73.5 of 100."""
        if self.standard is None or not self.max_points:
            return None
        return self.standard * self.points / self.max_points

    def to_json(self) -> dict[str, object]:
        return {
            "subject": self.subject,
            "group": self.group,
            "points": self.points,
            "max_points": self.max_points,
            "scored": self.scored,
            "questions": self.questions,
            "standard": self.standard,
            "scaled": self.scaled,
        }


@dataclass(frozen=True)
class GroupPoints:
    group: str
    scaled: float
    standard: float
    subjects: int

    def to_json(self) -> dict[str, object]:
        return {
            "group": self.group,
            "scaled": self.scaled,
            "standard": self.standard,
            "subjects": self.subjects,
        }


def parse_standard_scores(text: str) -> dict[str, float]:
    """`数学=100,语文=150` -> {'数学': 100.0, '语文': 150.0}; ValueError naming the bad item."""
    scores: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        subject, sep, value = item.rpartition("=")
        try:
            score = float(value)
        except ValueError:
            score = -1.0
        if not sep or not subject.strip() or not score > 0:
            raise InputError(f"--standard-score wants SUBJECT=POSITIVE_NUMBER items, got {item!r}")
        scores[subject.strip()] = score
    return scores


# `--standard-score`: the option of RunConfig.standard_scores (kaoshi run), which `kaoshi report` takes too.
# Written here, beside its parser, so that the report's parser need not import the run's settings
# (kaoshi.runner.config imports the model options and the run pipeline: about 12 ms of its start).
STANDARD_SCORES_OPTION = cli(
    "scale each subject's points to a standard score (overrides the exam file's standard_scores)",
    flag="--standard-score",
    parse=parse_standard_scores,
    metavar="SUBJECT=N,...",
)


def subject_points(
    rows: Iterable[tuple[ScoreRow, int]], standards: Mapping[str, float]
) -> list[SubjectPoints]:
    """One row per subject (samples without a subject are left out), in subject order; `rows`: the run's
    rows, each with how many samples it stands for, in the order first met (a subject's group is its first
    sample's). Points are summed exactly, as Tally sums them."""
    points: dict[str, list[tuple[float, int]]] = {}  # subject -> (points earned, samples)
    available: dict[str, list[tuple[float, int]]] = {}  # subject -> (points available, samples)
    scored: dict[str, int] = {}
    questions: dict[str, int] = {}
    groups: dict[str, str | None] = {}
    for row, weight in rows:
        if not row.subject:
            continue
        groups.setdefault(row.subject, row.group)
        questions[row.subject] = questions.get(row.subject, 0) + weight
        points.setdefault(row.subject, [])
        available.setdefault(row.subject, [])
        if row.status != "error" and row.score is not None:
            points[row.subject].append((row.score, weight))
            available[row.subject].append((row.points, weight))
            scored[row.subject] = scored.get(row.subject, 0) + weight
    return [
        SubjectPoints(
            subject,
            groups[subject],
            exact_sum(points[subject]),
            exact_sum(available[subject]),
            scored.get(subject, 0),
            questions[subject],
            standards.get(subject),
        )
        for subject in sorted(questions)
    ]


def group_points(subjects: Iterable[SubjectPoints]) -> list[GroupPoints]:
    """Group totals: the sum of the group's scaled subject scores against the sum of their standards."""
    totals: dict[str, list[float]] = {}
    for row in subjects:
        scaled = row.scaled
        if row.group is None or scaled is None or row.standard is None:
            continue
        total = totals.setdefault(row.group, [0.0, 0.0, 0])
        total[0] += scaled
        total[1] += row.standard
        total[2] += 1
    return [GroupPoints(name, s, std, int(k)) for name, (s, std, k) in sorted(totals.items())]
