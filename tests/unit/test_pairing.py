"""Pairing runs by question content: the fingerprint, and every command that pairs runs refusing to pair
the same id holding different questions (C-Eval dev and val both have `law/0`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kaoshi.cli.main import main
from kaoshi.data.model import Question, QuestionType
from kaoshi.data.shuffle import shuffle_question
from kaoshi.store import SampleRecord, pair_questions, question_fingerprint
from tests.support.files import full_ceval
from tests.support.stores import sample

QUESTION = Question(
    "q1", QuestionType.MULTI, "下列说法正确的有（）。", (("A", "甲"), ("B", "乙"), ("C", "丙"), ("D", "丁")),
    frozenset("AC"),
)  # fmt: skip


def asked(question: Question, status: str = "ok", **changes: object) -> SampleRecord:
    """A sample of `question` as the store keeps it."""
    content = question.content()
    return sample(question.id, status, qtype=question.type.value, gold=question.answer, question=content,
                  **changes)  # fmt: skip


def test_fingerprint_is_the_content_whatever_the_option_order() -> None:
    original = question_fingerprint(asked(QUESTION))
    shuffled = shuffle_question(QUESTION, seed=3)
    assert shuffled.options != QUESTION.options and shuffled.answer != QUESTION.answer
    assert question_fingerprint(asked(shuffled)) == original  # the gold follows its options
    # a file shuffled elsewhere (no recorded permutation), with other whitespace
    elsewhere = replace(QUESTION, options=(("A", "丙"), ("B", "甲 "), ("C", "丁"), ("D", "乙")),
                        answer=frozenset("AB"))  # fmt: skip
    assert question_fingerprint(asked(elsewhere)) == original
    # another question under the same id: other stem, other option, other gold, other type
    for changed in (
        replace(QUESTION, stem="下列说法错误的有（）。"),
        replace(QUESTION, options=(*QUESTION.options[:3], ("D", "戊"))),
        replace(QUESTION, answer=frozenset("AD")),
        replace(QUESTION, type=QuestionType.SINGLE, answer=frozenset("A")),
    ):
        assert question_fingerprint(asked(changed)) != original
    # the id, the explanation and the points are not the question's content
    assert question_fingerprint(asked(replace(QUESTION, id="q2", explanation="因为", points=2))) == original


def test_pairing_drops_ids_holding_different_questions_and_keeps_the_first_runs_order() -> None:
    other = replace(QUESTION, id="q2", stem="另一题")
    first = [asked(QUESTION), asked(other)]
    second = [asked(replace(other, stem="同号不同题")), asked(QUESTION, status="error", correct=None)]
    pairing = pair_questions([first, second])
    assert pairing.conflicts == ("q2",) and pairing.rows == ()  # q1 errored in the second run
    warning = pairing.warning()
    assert warning is not None and "1 question id(s) hold different questions" in warning and "q2" in warning
    pairing = pair_questions([first, [asked(other), asked(QUESTION)]])
    assert [row[0].question_id for row in pairing.rows] == ["q1", "q2"] and pairing.graded_by_all == 2
    assert pair_questions([first, first]).warning() is None


@pytest.fixture
def dev_and_val(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    """C-Eval law: a run on dev (law/0..4) and one on val (law/0, law/1: other questions, same ids)."""
    root = full_ceval(tmp_path / "ceval-exam")
    store = str(tmp_path / "store.sqlite")
    for split in ("dev", "val"):
        code = main(["run", "--benchmark", "ceval", "--data", str(root), "--split", split,
                     "--subjects", "law", "--shots", "0", "--model", "constant:C", "--run-name", split,
                     "--store", store])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    return store


def test_dev_and_val_runs_are_never_paired_on_the_same_ids(
    capsys: pytest.CaptureFixture[str], dev_and_val: str
) -> None:
    store = dev_and_val
    assert main(["compare", "dev", "val", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "warning: 2 question id(s) hold different questions in different runs" in err
    assert "law/0, law/1" in err and "share no graded question" in err

    assert main(["report", "dev", "val", "--format", "json", "--store", store]) == 0
    captured = capsys.readouterr()
    assert "warning: 2 question id(s)" in captured.err
    document = json.loads(captured.out)
    assert document["compared_on"] == {"questions": 0, "runs": 2, "common": False}
    assert document["conflicting_ids"] == ["law/0", "law/1"]
    assert document["comparisons"] == [{"baseline": "dev", "run": "val", "n": 0}]
    assert main(["report", "dev", "val", "--store", store]) == 0
    assert "not compared: no question is answered by all 2 runs" in capsys.readouterr().out

    assert main(["leaderboard", "--format", "json", "--store", store]) == 0
    captured = capsys.readouterr()
    assert "ceval: warning: 2 question id(s)" in captured.err
    (board,) = json.loads(captured.out)
    assert board["compared_on"]["common"] is False and board["conflicting_ids"] == ["law/0", "law/1"]

    assert main(["contamination", "dev", "val", "--store", store]) == 2
    assert "warning: 2 question id(s)" in capsys.readouterr().err
    assert main(["vote", "dev", "val", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "share no graded objective question (2 question id(s) hold different questions" in err


def test_contamination_pairs_a_shuffled_run_and_shows_both_runs_coverage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from tests.support.runs import mock_script

    store = str(tmp_path / "store.sqlite")
    script = mock_script(tmp_path / "m.jsonl", set())
    for name, extra in (("orig", []), ("shuf", ["--shuffle-options", "5"])):
        assert main(["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", name,
                     "--store", store, *extra]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["contamination", "orig", "shuf", "--format", "json", "--store", store]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["compared_on"] == {"questions": 40, "runs": 2, "common": True}
    assert document["conflicting_ids"] == [] and all(c["complete"] for c in document["coverage"])
    assert main(["contamination", "orig", "shuf", "--format", "md", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "### runs — compared on 40 questions graded by both runs" in out
    assert "| shuf | 44 | 44 | 40 | 0 | 0 | complete |" in out


def key_rows_of(runs: list[list[SampleRecord]]) -> list[list[tuple[str, str, str, int | None, float | None]]]:
    """Each run's key rows, as the store reads them (id, fingerprint, status, correct, score)."""

    def key_row(s: SampleRecord) -> tuple[str, str, str, int | None, float | None]:
        correct = None if s.correct is None else int(s.correct)
        return s.question_id, question_fingerprint(s), str(s.status), correct, s.score

    return [[key_row(s) for s in samples] for samples in runs]


def random_outcome(rng: Any) -> Callable[[], tuple[str, bool | None]]:
    def answered() -> tuple[str, bool | None]:
        status = rng.choice(["ok", "ok", "ok", "error", "unparsed"])
        # an error holds no outcome, but the filters must not lean on it: some here hold one
        unchecked = (status == "error" and rng.random() < 0.7) or rng.random() < 0.1
        return status, None if unchecked else rng.random() < 0.5

    return answered


def runs_of_one_exam(rng: Any) -> list[list[SampleRecord]]:
    """Runs answering the same questions in the same order (as runs of one exam are read), a tenth of them
    another question under the same id."""
    order = rng.sample(range(40), 30)
    answered = random_outcome(rng)
    runs = []
    for _ in range(rng.randint(1, 4)):
        samples = []
        for i in order:
            status, correct = answered()
            stem = f"题{i}" if rng.random() > 0.1 else f"另一题{i}"
            samples.append(sample(f"q{i}", status, question={"stem": stem}, correct=correct))
        runs.append(samples)
    return runs


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("one_exam", [False, True])
def test_each_way_of_pairing_key_rows_is_pair_questions_way(seed: int, one_exam: bool) -> None:
    """Every way the key rows are paired (answered by every run, every sample, graded by every run) is
    pair_questions' with that keep: the same questions in the first run's order, the same conflicts, and
    each run's rows of them (pair_questions' rows a run at a time), whether the runs come in the first
    run's order (runs of one exam, read in question order) or each in its own."""
    import random

    from kaoshi.store.pairing import graded, key_pairings, pair_graded_rows

    rng = random.Random(seed)
    runs = runs_of_one_exam(rng) if one_exam else [random_answers(rng, random_outcome(rng)) for _ in range(3)]
    keys = key_rows_of(runs)
    answered, every = key_pairings(keys)
    for counted, keep in ((answered, None), (every, lambda _: True), (pair_graded_rows(keys), graded)):
        expected = pair_questions(runs) if keep is None else pair_questions(runs, keep=keep)
        assert counted.ids == tuple(row[0].question_id for row in expected.rows)
        assert counted.conflicts == expected.conflicts and counted.runs == expected.runs
        rows = key_rows_of([list(row) for row in expected.rows])
        assert [list(column) for column in zip(*rows, strict=True)] == list(counted.columns) or not rows
    assert pair_graded_rows([]).paired == 0 and pair_graded_rows(keys).graded_by_all == every.graded_by_all


@pytest.mark.parametrize("seed", range(8))
def test_the_paired_outcomes_from_key_rows_are_those_of_the_summaries(seed: int) -> None:
    """key_paired_outcomes is paired_outcomes of summaries holding each run's outcomes on the common
    questions (all its own where there are none), with outcomes that add up exactly in any order and with
    ones that do not (then summed in the order of the question keys, as paired_outcomes sums them)."""
    import random
    from types import SimpleNamespace

    from kaoshi.report.compare import key_paired_outcomes, paired_outcomes
    from kaoshi.store.pairing import pair_key_rows

    def outcomes(rows: list[Any], among: set[str] | None) -> dict[tuple[str, str], float]:
        """RunSummary.outcomes as kaoshi.store.columns.outcome_keys reads them (among those questions)."""
        checked = [row for row in rows if row[3] is not None and row[2] != "error"]
        return {(row[0], row[1]): float(row[3]) for row in checked if among is None or row[0] in among}

    rng = random.Random(seed)
    runs = [random_answers(rng, random_outcome(rng)) for _ in range(rng.randint(1, 4))]
    apart = [
        [replace(s, question_id=f"{s.question_id}/{r}") for s in samples] for r, samples in enumerate(runs)
    ]
    fractions = [0.1, 0.2, 0.3, 0.7, 1e16, 1.0]
    for chosen in (runs, apart):
        keys = key_rows_of(chosen)
        uneven = [[(*row[:3], None if row[3] is None else rng.choice(fractions), row[4]) for row in rows]
                  for rows in keys]  # fmt: skip
        for found in (keys, uneven):
            pairing = pair_key_rows(found)
            among = set(pairing.ids) if pairing.paired else None
            summaries = [SimpleNamespace(run=f"run{r}", outcomes=outcomes(rows, among))
                         for r, rows in enumerate(found)]  # fmt: skip
            expected = paired_outcomes(summaries)  # type: ignore[arg-type]
            names = [summary.run for summary in summaries]
            assert key_paired_outcomes(names, pairing, found) == expected
            assert key_paired_outcomes(names, replace(pairing, columns=()), found) == expected


def reference_pairing(
    runs: list[list[SampleRecord]], keep: object = None
) -> tuple[list[tuple[str, ...]], list[str]]:
    """Pairing as its definition reads, one question at a time: the ids of the rows, and the conflicts."""
    by_run = [{s.question_id: s for s in samples} for samples in runs]
    rows, conflicts = [], []
    for question_id in by_run[0]:
        row = [samples[question_id] for samples in by_run if question_id in samples]
        if len(row) < len(by_run):
            continue
        if len({question_fingerprint(s) for s in row}) > 1:
            conflicts.append(question_id)
        elif all((s.status != "error") if keep is None else keep(s) for s in row):  # type: ignore[operator]
            rows.append(tuple(s.question_id for s in row))
    return rows, conflicts


def random_answers(rng: Any, outcome: Callable[[], tuple[str, bool | None]]) -> list[SampleRecord]:
    """A run's answers to 20-40 of 40 questions in random order, a tenth of them to another question under
    the same id; `outcome` gives each its status and whether it was right."""
    samples = []
    for i in rng.sample(range(40), rng.randint(20, 40)):
        stem = f"题{i}" if rng.random() > 0.1 else f"另一题{i}"
        status, correct = outcome()
        samples.append(sample(f"q{i}", status, question={"stem": stem}, correct=correct))
    return samples


@pytest.mark.parametrize("seed", range(6))
def test_pairing_by_sets_is_pairing_one_question_at_a_time(seed: int) -> None:
    """Runs with missing questions, errors, the same id holding another question, repeated ids and a
    keep of the caller's: the same rows, in the first run's order, and the same conflicts."""
    import random

    rng = random.Random(seed)
    runs = []
    for _ in range(rng.randint(1, 4)):
        samples = random_answers(rng, lambda: ("error" if rng.random() < 0.1 else "ok", rng.random() < 0.5))
        if samples and rng.random() < 0.5:
            samples.append(replace(samples[0], status="ok"))  # the same id again: the last one counts
        runs.append(samples)
    found: list[tuple[int, int]] = []
    for keep in (None, lambda s: bool(s.correct)):
        pairing = pair_questions(runs) if keep is None else pair_questions(runs, keep=keep)
        rows, conflicts = reference_pairing(runs, keep)
        assert [tuple(s.question_id for s in row) for row in pairing.rows] == rows
        assert list(pairing.conflicts) == conflicts
        found.append((len(rows), len(conflicts)))
        by_run = [{s.question_id: s for s in samples} for samples in runs]
        assert all(row[r] is by_run[r][row[0].question_id] for row in pairing.rows for r in range(len(runs)))
    assert found[0][0] > 0 and found[0][0] >= found[1][0] and (len(runs) == 1 or found[0][1] > 0), found


def test_only_questions_every_run_holds_alike_are_fingerprinted_and_asked_keep() -> None:
    """A question one run alone holds is never read (its malformed options, a type keep cannot judge),
    nor is keep asked of a question whose content differs between the runs."""
    good = [sample("q1"), sample("q2", question={"stem": "甲"})]
    other = [sample("q1"), sample("q2", question={"stem": "乙"}), sample("q3", question={"options": [["A"]]})]
    asked: list[str] = []

    def keep(s: SampleRecord) -> bool:
        asked.append(s.question_id)
        return True

    pairing = pair_questions([good, other], keep=keep)
    assert [row[0].question_id for row in pairing.rows] == ["q1"] and pairing.conflicts == ("q2",)
    assert asked == ["q1", "q1"]


@pytest.mark.parametrize("seed", range(6))
def test_pairing_key_rows_is_pairing_the_samples(seed: int) -> None:
    """What a comparison counted by SQLite pairs (each run's key rows, as the store reads them: id,
    fingerprint, status, correct, score) gives pair_questions' questions, conflicts and count graded by
    all, what the paired statistics read of the runs' outcomes on them and their coverage."""
    import random
    from types import SimpleNamespace

    from kaoshi.report.compare import key_paired_outcomes, paired_outcomes
    from kaoshi.store import RunRecord, RunStatus
    from kaoshi.store.coverage import key_coverage, run_coverage
    from kaoshi.store.pairing import pair_key_rows
    from tests.support.stores import SPEC

    rng = random.Random(seed)

    def answered() -> tuple[str, bool | None]:
        status = rng.choice(["ok", "ok", "ok", "error", "unparsed"])
        # an error holds no outcome, but the filters must not lean on it: some here hold one
        unchecked = (status == "error" and rng.random() < 0.7) or rng.random() < 0.1
        return status, None if unchecked else rng.random() < 0.5

    runs = [random_answers(rng, answered) for _ in range(rng.randint(1, 4))]

    def key_row(s: SampleRecord) -> tuple[str, str, str, int | None, float | None]:
        correct = None if s.correct is None else int(s.correct)
        return s.question_id, question_fingerprint(s), str(s.status), correct, s.score

    keys = [[key_row(s) for s in samples] for samples in runs]
    for r in range(1, len(keys)):
        random.Random(r).shuffle(keys[r])  # the runs after the first are read in the index's order
    for answered_only in (False, True):
        every = pair_questions(runs) if answered_only else pair_questions(runs, keep=lambda _: True)
        counted = pair_key_rows(keys, answered_only=answered_only)
        assert counted.ids == tuple(row[0].question_id for row in every.rows)
        assert counted.conflicts == every.conflicts and counted.graded_by_all == every.graded_by_all
        assert counted.paired == every.paired and counted.runs == every.runs
    pairing = pair_questions(runs)
    summaries = []
    for r, (samples, found) in enumerate(zip(runs, keys, strict=True)):
        paired = pairing.samples_of(r) if pairing.rows else samples
        expected = {(s.question_id, question_fingerprint(s)): float(bool(s.correct))
                    for s in paired if s.correct is not None and s.status != "error"}  # fmt: skip
        summaries.append(SimpleNamespace(run=f"run{r}", outcomes=expected))
        record = RunRecord(
            f"run{r}", replace(SPEC, n_questions=45), RunStatus.FINISHED, 0.0, 1.0, len(samples)
        )
        assert key_coverage(record, found) == run_coverage(record, samples)
    names = [summary.run for summary in summaries]
    assert key_paired_outcomes(names, counted, keys) == paired_outcomes(summaries)  # type: ignore[arg-type]
    assert pair_key_rows([]).paired == 0
