"""Answer files by subject, {subject: {"<id>": "A", ...}}, validated: the C-Eval and FinEval test
submissions (every subject, test split) and M3KE's answers (its test labels are withheld). Imported when
an answer file is written, not when a benchmark is loaded: it reads the store's records."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kaoshi.data.model import format_gold
from kaoshi.errors import InputError
from kaoshi.store.records import RunRecord, SampleRecord, SampleStatus

CEVAL_LETTERS = frozenset("ABCD")


@dataclass(frozen=True)
class AnswerFile:
    """What one benchmark's answer file must hold: runs on `benchmark` (split `split`, None: any), and
    every subject of `subjects` in that order (empty: the subjects the run has, sorted)."""

    benchmark: str
    title: str  # the benchmark as messages name it: "C-Eval"
    document: str = "submission"  # what the file is called in messages
    subjects: tuple[str, ...] = ()
    split: str | None = "test"


class SubmissionError(InputError):
    """The run cannot make a valid submission; the message says what is missing."""


@dataclass(frozen=True)
class Submission:
    answers: dict[str, dict[str, str]]
    # Questions whose answer could not be read (unparsed, ambiguous, not one letter A-D), in run order:
    # submitted as "" (graded wrong), as docs/how-to/served-model.md says, rather than refusing the whole
    # submission.
    unreadable: tuple[str, ...] = ()

    @property
    def unanswered(self) -> int:
        return len(self.unreadable)

    def warning(self) -> str | None:
        """What to tell the user about the answers submitted as "" (None when there are none)."""
        if not self.unreadable:
            return None
        return (
            f"warning: {len(self.unreadable)} question(s) had no readable answer (unparsed, ambiguous or "
            f"not one of A-D) and are submitted as '': {_list(self.unreadable)}"
        )


def _list(items: Iterable[str], limit: int = 10) -> str:
    items = list(items)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def answer_file(kind: AnswerFile, run: RunRecord, samples: Iterable[SampleRecord]) -> Submission:
    """Build and validate an answer file; SubmissionError names every reason it cannot be complete."""
    spec = run.spec
    samples = list(samples)
    # Runs record the split asked for; without --split the loader's default applies, which the
    # stored questions carry.
    split = spec.split or next((s.question.get("split") for s in samples), None)
    if spec.benchmark != kind.benchmark:
        raise SubmissionError(
            f"run {run.name!r} is on {spec.benchmark!r}; a {kind.title} {kind.document} needs a "
            f"{kind.benchmark} run"
        )
    if kind.split is not None and split != kind.split:
        raise SubmissionError(
            f"run {run.name!r} is on the {split!r} split; the {kind.document} needs --split {kind.split}"
        )
    problems: list[str] = []
    if spec.limit_per_subject is not None:
        problems.append(f"the run was limited to {spec.limit_per_subject} questions per subject (--limit)")
    if spec.limit is not None:
        problems.append(f"the run was limited to {spec.limit} questions in all (--limit-total)")
    by_subject: dict[str, dict[str, str]] = {}
    errors: list[str] = []
    unreadable: list[str] = []
    n = 0
    for sample in samples:
        n += 1
        subject, _, row_id = sample.question_id.rpartition("/")
        if sample.status == SampleStatus.ERROR:
            errors.append(sample.question_id)
            continue
        answer = submitted_letter(sample)
        if not answer:
            unreadable.append(sample.question_id)
        by_subject.setdefault(subject, {})[row_id] = answer
    if n < spec.n_questions:
        problems.append(f"{spec.n_questions - n} of {spec.n_questions} questions have no stored answer yet")
    if errors:
        problems.append(
            f"{len(errors)} question(s) ended in an error: {_list(errors)} (resume the run to retry)"
        )
    missing_subjects = [s for s in kind.subjects if s not in by_subject]
    if missing_subjects:
        problems.append(f"{len(missing_subjects)} subject(s) missing: {_list(missing_subjects)}")
    unknown = sorted(set(by_subject) - set(kind.subjects)) if kind.subjects else []
    if unknown:
        problems.append(f"not {kind.title} subjects: {_list(unknown)}")
    for subject, answers in by_subject.items():
        gaps = _missing_ids(answers)
        if gaps:
            problems.append(f"{subject}: ids {_list(gaps)} missing")
    if problems:
        raise SubmissionError(
            f"run {run.name!r} cannot make a complete {kind.title} {kind.document}:\n  - "
            + "\n  - ".join(problems)
        )
    ordered = {
        subject: dict(sorted(by_subject[subject].items(), key=lambda item: int(item[0])))
        for subject in (kind.subjects or sorted(by_subject))
    }
    return Submission(ordered, tuple(unreadable))


def submitted_letter(sample: SampleRecord) -> str:
    """The letter to submit: the answer read as one of A-D, else "" (unparsed, ambiguous between
    letters, or anything else that is not one letter)."""
    if sample.status != SampleStatus.OK or not isinstance(sample.answer, frozenset):
        return ""
    answer = format_gold(sample.answer)
    return answer if answer in CEVAL_LETTERS else ""


def _missing_ids(answers: dict[str, str]) -> list[str]:
    """C-Eval ids run 0..n-1 within a subject; a gap means a question was not evaluated."""
    try:
        ids = sorted(int(i) for i in answers)
    except ValueError:
        raise SubmissionError(f"ids must be integers, got {sorted(answers)[:3]}") from None
    present = set(ids)
    return [str(i) for i in range(ids[-1] + 1) if i not in present] if ids else []


def export_answer_file(
    kind: AnswerFile, run: RunRecord, samples: Iterable[SampleRecord], path: Path
) -> tuple[str, ...]:
    """Build, validate and write a run's answer file; the lines to tell the user (what was written, and
    the warning about unreadable answers when there are any)."""
    submission = answer_file(kind, run, samples)
    write_submission(submission, path)
    total = sum(len(answers) for answers in submission.answers.values())
    warning = submission.warning()
    wrote = f"wrote {path}: {len(submission.answers)} subjects, {total} answers"
    return (wrote, warning) if warning else (wrote,)


def write_submission(submission: Submission, path: Path) -> None:
    """Write UTF-8 JSON atomically: a failed write never leaves half a file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(submission.answers, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
