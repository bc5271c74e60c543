"""Honest subsets (issue 43): a stratified random sample of an exam, and the full exam's accuracy estimated
from it with the finite-population correction."""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.analysis.estimate import estimate_accuracy
from kaoshi.api.summary import summarize
from kaoshi.data.model import Question, QuestionType
from kaoshi.data.subsets import Subset, allocate, draw_sample, strata_key, stratum_of
from kaoshi.errors import InputError
from kaoshi.report.render import render_summary
from kaoshi.store import Store
from tests.support.stores import SPEC, sample

LETTERS = "ABCD"


def exam(seed: int = 7, subjects: int = 52, smallest: int = 8, largest: int = 60) -> list[Question]:
    """Our own C-Eval-val-shaped exam: subjects of uneven size, each with its own share of gold `A`s (a
    constant-`A` model's accuracy differs by subject, as a real model's does), a few true/false and open
    questions, the questions sorted by subject as the data files are."""
    rng = random.Random(seed)
    questions = []
    for s in range(subjects):
        bias = rng.uniform(0.05, 0.6)
        for i in range(rng.randint(smallest, largest)):
            qid = f"s{s}/{i}"
            if i % 17 == 16:
                questions.append(
                    Question(qid, QuestionType.OPEN, "论述题", answer="参考答案", subject=f"科目{s}")
                )
                continue
            gold = "A" if rng.random() < bias else rng.choice(LETTERS[1:])
            options = tuple((letter, f"选项{letter}") for letter in LETTERS)
            questions.append(
                Question(qid, QuestionType.SINGLE, f"题{s}-{i}", options, frozenset(gold), subject=f"科目{s}")
            )
    return questions


def objective(question: Question) -> bool:
    return question.type is QuestionType.SINGLE and question.answer is not None


def constant_a(questions: list[Question], by: str = "subject") -> dict[str, tuple[int, int]]:
    """(right, checked) per stratum (under grouping `by`) of a model that always answers A."""
    found: dict[str, list[int]] = {}
    for question in questions:
        if objective(question):
            counts = found.setdefault(stratum_of(question, by), [0, 0])
            counts[0] += question.answer == frozenset("A")
            counts[1] += 1
    return {name: (right, checked) for name, (right, checked) in found.items()}


@pytest.mark.parametrize(
    ("sizes", "size", "expected"),
    [
        ({"a": 10, "b": 10}, 4, {"a": 2, "b": 2}),
        ({"a": 10, "b": 30}, 8, {"a": 3, "b": 5}),  # 2 + 2 first, then 4 shared 1:3 (1 and 3)
        ({"a": 1, "b": 100}, 10, {"a": 1, "b": 9}),  # a stratum of one question gives its one
        ({"a": 5, "b": 5, "c": 5}, 15, {"a": 5, "b": 5, "c": 5}),  # the whole exam
        ({"a": 50, "b": 50, "c": 1}, 7, {"a": 3, "b": 3, "c": 1}),  # the remainder to the one named first
        ({"a": 3, "b": 3, "c": 3}, 2, {"a": 1, "b": 1, "c": 0}),  # fewer draws than strata
    ],
)
def test_allocation(sizes: dict[str, int], size: int, expected: dict[str, int]) -> None:
    assert allocate(sizes, size) == expected


@pytest.mark.parametrize("size", [0, -1, 16])
def test_a_sample_outside_the_exam_is_refused(size: int) -> None:
    with pytest.raises(InputError, match=f"--sample {size}: draw between 1 and the exam's 15 questions"):
        allocate({"a": 5, "b": 10}, size)


def test_allocation_is_proportional_after_the_first_draws_and_never_overdraws() -> None:
    rng = random.Random(3)
    for _ in range(200):
        sizes = {f"s{i}": rng.randint(1, 80) for i in range(rng.randint(1, 30))}
        size = rng.randint(2 * len(sizes), sum(sizes.values()))
        drawn = allocate(sizes, size)
        assert sum(drawn.values()) == size
        assert all(min(2, sizes[n]) <= drawn[n] <= sizes[n] for n in sizes)
        left = size - sum(min(2, held) for held in sizes.values())
        room = {n: sizes[n] - min(2, sizes[n]) for n in sizes}
        for name in sizes:  # its proportional share of the rest, rounded down or up
            share = left * room[name] / sum(room.values()) if sum(room.values()) else 0
            assert int(share) <= drawn[name] - min(2, sizes[name]) <= int(share) + 1


def test_strata_are_the_finest_grouping_with_two_draws_each() -> None:
    questions = exam()
    assert strata_key(questions, 200) == "subject"  # 52 subjects, 104 first draws
    assert strata_key(questions, 60) == "type"  # too few for the subjects; no domains; two types
    with_domains = [replace(q, domain=f"领域{int(q.id[1:].split('/')[0]) % 6}") for q in questions]
    assert strata_key(with_domains, 60) == "domain"
    assert strata_key(questions, 3) == "all"


def test_a_sample_is_drawn_by_its_seed_in_the_exams_order() -> None:
    questions = exam()
    drawn, subset = draw_sample(questions, 200, seed=1, counted=objective)
    again, _ = draw_sample(questions, 200, seed=1, counted=objective)
    other, _ = draw_sample(questions, 200, seed=2, counted=objective)
    assert drawn == again and drawn != other and len(drawn) == 200
    position = {q.id: i for i, q in enumerate(questions)}
    assert [position[q.id] for q in drawn] == sorted(position[q.id] for q in drawn)
    by_subject = Counter(str(q.subject) for q in drawn)
    assert {name: stratum.drawn for name, stratum in subset.strata.items()} == by_subject
    assert subset.by == "subject" and subset.population == len(questions)
    assert all(
        s.counted == sum(objective(q) for q in questions if q.subject == n) for n, s in subset.strata.items()
    )
    assert Subset.from_json(subset.to_json()) == subset
    with pytest.raises(InputError, match="a run's sample is not one kaoshi reads"):
        Subset.from_json({"size": 3, "seed": 1, "by": "subject", "strata": {"a": ["x"]}})


def test_the_whole_exam_drawn_is_the_exams_accuracy_exactly() -> None:
    questions = exam()
    drawn, subset = draw_sample(questions, len(questions), seed=0, counted=objective)
    found = constant_a(list(drawn))
    truth = sum(r for r, _ in found.values()) / sum(c for _, c in found.values())
    estimate = estimate_accuracy({n: s.counted for n, s in subset.strata.items()}, found)
    assert estimate.accuracy == pytest.approx(truth) and estimate.standard_error == 0
    assert estimate.low == estimate.high == pytest.approx(truth)


def test_the_interval_covers_the_full_exams_accuracy_in_at_least_90_percent_of_200_draws() -> None:
    """A constant-`A` model on our 1,500-question exam: its accuracy on the whole exam is known; 200
    samples of 200 questions, each with its own seed, estimate it."""
    questions = exam()
    full = constant_a(questions)
    truth = sum(r for r, _ in full.values()) / sum(c for _, c in full.values())
    covered = 0
    widths = []
    for seed in range(200):
        drawn, subset = draw_sample(questions, 200, seed=seed, counted=objective)
        estimate = estimate_accuracy(
            {n: s.counted for n, s in subset.strata.items()}, constant_a(list(drawn), subset.by)
        )
        covered += estimate.low <= truth <= estimate.high
        widths.append(estimate.high - estimate.low)
    assert covered >= 180, f"covered {covered} of 200"
    assert 0.05 < sum(widths) / len(widths) < 0.2  # an interval that says something


def test_an_estimate_needs_a_checked_answer_in_every_part_of_the_exam() -> None:
    with pytest.raises(InputError, match=r"no answer checked in 1 part\(s\) of the exam sampled: b"):
        estimate_accuracy({"a": 10, "b": 10}, {"a": (3, 5), "b": (0, 0)})
    with pytest.raises(InputError, match="a: 6 right of 5 checked of 10 questions"):
        estimate_accuracy({"a": 10}, {"a": (6, 5)})
    with pytest.raises(InputError, match=r"confidence 0\.8"):
        estimate_accuracy({"a": 10}, {"a": (3, 5)}, confidence=0.8)
    # a stratum with nothing an accuracy counts (open questions only) is no part of the estimate
    assert estimate_accuracy({"a": 10, "open": 0}, {"a": (5, 10)}).accuracy == 0.5


def stored_sample_run(
    path: Path, size: int = 200, seed: int = 3, failing: str | None = None
) -> tuple[Subset, list[Question]]:
    """A run of a constant-`A` model on a sample of our exam, stored as `kaoshi run --sample` stores it;
    every answer in subject `failing` failed with an error."""
    questions = exam()
    drawn, subset = draw_sample(questions, size, seed=seed, counted=objective)
    spec = replace(SPEC, n_questions=len(drawn), sample=subset.to_json())
    with Store(path) as store:
        store.open_run("sampled", spec)
        for position, question in enumerate(drawn):
            if not objective(question):
                store.add_sample(
                    "sampled",
                    sample(
                        question.id,
                        position=position,
                        qtype="open",
                        subject=question.subject,
                        gold="参考答案",
                        answer=None,
                        correct=None,
                        score=None,
                        points=1.0,
                    ),
                )
                continue
            right = question.answer == frozenset("A")
            if question.subject == failing:
                store.add_sample(
                    "sampled",
                    sample(
                        question.id,
                        "error",
                        position=position,
                        qtype="single",
                        subject=question.subject,
                        gold=question.answer,
                        answer=None,
                        correct=None,
                        score=None,
                        points=1.0,
                        error="boom",
                    ),
                )
                continue
            store.add_sample(
                "sampled",
                sample(
                    question.id,
                    position=position,
                    qtype="single",
                    subject=question.subject,
                    gold=question.answer,
                    answer=frozenset("A"),
                    correct=right,
                    score=1.0 if right else 0.0,
                    points=1.0,
                ),
            )
        store.finish_run("sampled")
    return subset, list(drawn)


@pytest.mark.parametrize("by", [None, ("domain",)])
def test_a_stored_sample_run_reports_the_full_exams_estimate(
    tmp_path: Path, by: tuple[str, ...] | None
) -> None:
    """`kaoshi report` of a run of a sample: the estimate from its subjects (counted for it even when the
    report is asked by another grouping), as kaoshi.analysis.estimate makes it, in JSON and as a table."""
    path = tmp_path / "s.sqlite"
    subset, drawn = stored_sample_run(path)
    summary = summarize("sampled", store=path, by=by)
    expected = estimate_accuracy({n: s.counted for n, s in subset.strata.items()}, constant_a(drawn))
    assert summary.estimate == expected and not summary.estimate_note
    assert set(summary.groups) == ({"domain"} if by else {"domain", "type", "subject", "category", "group"})
    assert summary.to_json()["estimate"] == expected.to_json()
    shown = render_summary(summary, "md")
    assert "the full exam, estimated from a sample" in shown and f"{100 * expected.accuracy:.1f}%" in shown
    assert "200 questions drawn by subject, seed 3" in shown


def test_a_sample_run_with_a_part_of_the_exam_unanswered_says_why_it_has_no_estimate(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    subset, _ = stored_sample_run(path, failing="科目7")
    assert subset.strata["科目7"].drawn >= 2
    summary = summarize("sampled", store=path)
    assert summary.estimate is None
    note = "no estimate of the full exam: no answer checked in 1 part(s) of the exam sampled: 科目7"
    assert summary.estimate_note == note
    assert summary.estimate_note in render_summary(summary, "md")


def scored_exam(
    seed: int, subjects: int, sizes: tuple[int, int], accuracy: float, open_share: float = 0.0
) -> tuple[list[Question], dict[str, bool]]:
    """An exam and which of its objective questions a model of about `accuracy` gets right."""
    rng = random.Random(seed)
    questions, right = [], {}
    for s in range(subjects):
        for i in range(rng.randint(*sizes)):
            qid = f"s{s}/{i}"
            if rng.random() < open_share:
                questions.append(
                    Question(qid, QuestionType.OPEN, "论述题", answer="参考答案", subject=f"科目{s}")
                )
                continue
            options = (("A", "甲"), ("B", "乙"))
            questions.append(
                Question(qid, QuestionType.SINGLE, f"题{qid}", options, frozenset("A"), subject=f"科目{s}")
            )
            right[qid] = rng.random() < accuracy
    return questions, right


@pytest.mark.parametrize(
    ("case", "size"),
    [
        ((1, 52, (8, 60), 0.97, 0.0), 110),  # a strong model: most subjects' few answers all right
        ((2, 1, (1000, 1000), 0.96, 0.0), 20),  # one stratum, 20 draws
        ((2, 1, (1000, 1000), 0.96, 0.0), 60),
        ((3, 20, (10, 30), 0.6, 0.5), 40),  # half the questions open: each subject's draws still checked
    ],
)
def test_intervals_cover_strong_models_and_exams_of_open_questions(
    case: tuple[int, int, tuple[int, int], float, float], size: int
) -> None:
    """Strata whose few answers are all right still have a spread (an interval of no width covered a
    96% model's accuracy in 55% of draws), and a stratum's first draws are questions an accuracy counts
    (drawn among all, both often fell on open questions and the exam had no estimate)."""
    questions, right = scored_exam(*case)
    truth = sum(right.values()) / len(right)
    covered = 0
    for seed in range(200):
        drawn, subset = draw_sample(questions, size, seed=seed, counted=objective)
        found: dict[str, list[int]] = {}
        for question in drawn:
            if objective(question):
                counts = found.setdefault(stratum_of(question, subset.by), [0, 0])
                counts[0] += right[question.id]
                counts[1] += 1
        estimate = estimate_accuracy(
            {n: s.counted for n, s in subset.strata.items()}, {n: (r, c) for n, (r, c) in found.items()}
        )
        assert estimate.standard_error > 0
        covered += estimate.low <= truth <= estimate.high
    assert covered >= 180, f"covered {covered} of 200"


def test_a_sample_whose_record_cannot_be_read_is_still_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    stored_sample_run(path)
    with sqlite3.connect(path) as db:
        spec = json.loads(db.execute("SELECT spec FROM runs").fetchone()[0])
        spec["sample"]["strata"] = {"科目0": ["x"]}
        db.execute("UPDATE runs SET spec = ?", (json.dumps(spec, ensure_ascii=False),))
    summary = summarize("sampled", store=path)
    assert summary.estimate is None and summary.overall.checked > 0
    assert summary.estimate_note.startswith(
        "no estimate of the full exam: a run's sample is not one kaoshi reads"
    )


def test_runs_compared_estimate_nothing_on_the_questions_they_share(tmp_path: Path) -> None:
    """`kaoshi report S1 S2`: each summary is of the questions both runs answered, not of a sample drawn
    from the exam: no estimate (each run's own report has it)."""
    from kaoshi.api.comparing import compare_stored

    path = tmp_path / "s.sqlite"
    stored_sample_run(path)
    with Store(path) as store:
        store.rename_run("sampled", "first")
    stored_sample_run(path)
    compared = compare_stored(["first", "sampled"], store=path)
    assert all(s.estimate is None and not s.estimate_note for s in compared.summaries)
    assert summarize("first", store=path).estimate is not None


def test_a_run_asks_exactly_its_draw_and_refuses_another(tmp_path: Path) -> None:
    """runner.asked: the questions a sampled run asks are its draw, drawn again from the exam and checked
    against the digest its spec keeps; a shard of the whole exam asks its part as before."""
    from kaoshi.data.model import Exam
    from kaoshi.runner.asked import asked_by, sample_record

    questions = exam()
    whole = Exam("ours", tuple(questions))
    record = sample_record(whole, 200, 5)
    drawn, _ = draw_sample(questions, 200, 5, objective)
    spec = replace(SPEC, sample=record)
    asks = asked_by(spec, whole)
    assert {q.id for q in questions if asks(q.id)} == {q.id for q in drawn}
    other = Exam("ours", tuple(questions[1:]))  # the exam changed: another draw
    with pytest.raises(InputError, match="is not the one this run asked"):
        asked_by(spec, other)
    half = asked_by(replace(SPEC, shard="1/2"), whole)
    assert 0 < sum(map(half, (q.id for q in questions))) < len(questions)
