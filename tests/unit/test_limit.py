"""`--limit N` is per subject (lm-evaluation-harness's is per task), `--limit-total N` caps the run in all;
the run spec keeps `limit` as the cap in all, so runs stored before keep their meaning."""

from __future__ import annotations

import dataclasses

import pytest

import kaoshi
from kaoshi.data.model import Exam, Question, QuestionType, limit_subject
from kaoshi.runner.config import RunConfig
from kaoshi.runner.prepare import limit_suffix
from kaoshi.store.records import RunSpec
from tests.support.runs import exam_spec


def question(qid: str, subject: str | None = None, domain: str | None = None) -> Question:
    return Question(qid, QuestionType.SINGLE, f"题{qid}", (("A", "1"), ("B", "2")), frozenset("A"),
                    subject=subject, domain=domain)  # fmt: skip


# Three subjects, interleaved as a merged file may have them, and one question with no subject.
SUBJECTS = ["数学", "物理", "数学", "化学", "数学", "物理", "化学", "数学", None, "化学", "数学"]
EXAM = Exam("three", tuple(question(f"q{i}", subject) for i, subject in enumerate(SUBJECTS)))


@pytest.mark.parametrize(
    ("per_subject", "total", "kept"),
    [
        # every subject present, N each, in the exam's order; the subject-less question is a group of its own
        (1, None, ["q0", "q1", "q3", "q8"]),
        (2, None, ["q0", "q1", "q2", "q3", "q5", "q6", "q8"]),
        # 物理 has 2 and 化学 3: a subject with fewer than N gives all it has
        (3, None, ["q0", "q1", "q2", "q3", "q4", "q5", "q6", "q8", "q9"]),
        (100, None, [f"q{i}" for i in range(11)]),
        # the cap in all comes after the per-subject limit
        (2, 4, ["q0", "q1", "q2", "q3"]),
        (1, 100, ["q0", "q1", "q3", "q8"]),
        (None, 3, ["q0", "q1", "q2"]),
        (None, None, [f"q{i}" for i in range(11)]),
    ],
)
def test_the_limits_keep_the_first_questions_of_each_subject_in_order(
    per_subject: int | None, total: int | None, kept: list[str]
) -> None:
    assert [q.id for q in EXAM.limited(total, per_subject=per_subject).questions] == kept


def test_an_exam_no_limit_drops_is_returned_as_it_is() -> None:
    assert EXAM.limited(per_subject=5) is EXAM and EXAM.limited(11) is EXAM


@pytest.mark.parametrize(
    ("subject", "domain", "group"),
    [
        ("数学", None, "数学"),  # C-Eval, CMMLU: the subject
        ("数学", "2010-2022_Math_I_MCQs", "数学"),  # GAOKAO-Bench: the subject, not the file it came from
        (None, "安全生产", "安全生产"),  # QualBench has only domains
        (None, None, None),
    ],
)
def test_a_question_counts_in_its_subject_else_its_domain(
    subject: str | None, domain: str | None, group: str | None
) -> None:
    assert limit_subject(question("q", subject, domain)) == group


def test_domains_are_the_groups_of_an_exam_without_subjects() -> None:
    exam = Exam("qb", tuple(question(f"q{i}", None, d) for i, d in enumerate("aabbba")))
    assert [q.id for q in exam.limited(per_subject=1).questions] == ["q0", "q2"]


@pytest.mark.parametrize(
    ("per_subject", "total", "suffix"),
    [(None, None, ""), (3, None, "-limit3"), (None, 30, "-total30"), (3, 30, "-limit3-total30")],
)
def test_a_default_run_name_records_the_limits(
    per_subject: int | None, total: int | None, suffix: str
) -> None:
    assert limit_suffix(per_subject, total) == suffix
    result = kaoshi.evaluate("sample", "constant:A", limit=per_subject, limit_total=total)
    assert result.name == f"sample-constant_A-generate{suffix}"
    # a name given is used as given
    named = kaoshi.evaluate("sample", "constant:A", limit=per_subject, limit_total=total, run_name="mine")
    assert named.name == "mine"


def test_evaluate_limit_is_per_subject_and_recorded_apart_from_the_total() -> None:
    result = kaoshi.evaluate("sample", "constant:A", limit=2)
    subjects = [s.subject for s in result.samples]
    assert len(subjects) == 8 and all(subjects.count(s) == 2 for s in set(subjects))  # 4 subjects, 2 each
    assert (result.spec.limit_per_subject, result.spec.limit) == (2, None)
    capped = kaoshi.evaluate("sample", "constant:A", kaoshi.RunConfig(limit=2, limit_total=3))
    assert len(capped.samples) == 3 and (capped.spec.limit_per_subject, capped.spec.limit) == (2, 3)
    assert [s.question_id for s in capped.samples] == [s.question_id for s in result.samples][:3]


@pytest.mark.parametrize("name", ["limit", "limit_total"])
def test_a_limit_must_be_positive(name: str) -> None:
    with pytest.raises(ValueError, match=f"--{name.replace('_', '-')} must be > 0"):
        RunConfig(**{name: 0}).check()


def test_a_stored_spec_without_the_per_subject_limit_equals_one_with_none() -> None:
    """Runs stored before --limit was per subject have no limit_per_subject key: they load, compare and
    resume as specs with None; their `limit` is still the cap in all."""
    spec = exam_spec(EXAM, "constant:A", limit=30)
    stored = spec.to_json()
    del stored["limit_per_subject"]
    loaded = RunSpec.from_json(stored)
    assert loaded == spec and loaded.differences(spec) == []
    assert (loaded.limit, loaded.limit_per_subject) == (30, None)
    per_subject = dataclasses.replace(spec, limit=None, limit_per_subject=30)
    assert {d[0] for d in loaded.differences(per_subject)} == {"limit", "limit_per_subject"}
