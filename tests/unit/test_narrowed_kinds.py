"""A run counted on a comparison's common questions, made from its kinds counted whole less those of the
questions left out (kaoshi.store.columns.narrowed_kinds, taken by kaoshi.api.counting where a run's writer
kept its counts, with its output tally: tests/unit/test_output_tally.py): the same kinds, counts, first and
last places and question ids as counting the run on those questions, whichever of its rows are left out,
and None where the whole kinds are not the run's."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
from kaoshi.analysis.outputs import TAIL_CHARS, counted_profile, counted_tally
from kaoshi.api.counting import open_types
from kaoshi.api.summary import keep_counts
from kaoshi.benchmarks import load_exam_result
from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.store import Store
from kaoshi.store.columns import KIND_COLUMNS, Kind
from kaoshi.store.records import GradeRecord, GradeStatus
from tests.support.compared_outputs import counted_again, pages, reported
from tests.support.mixed_runs import counting_refused, three_runs

# the hand-made runs (a kind of row a sample: every outcome) and two of the sample exam (kinds of many rows)
RUNS = ("mixed", "other", "third", "random", "constant")


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("narrowed") / "three.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    for name, model in (("random", "random"), ("constant", "constant:A")):
        kaoshi.evaluate("sample", model=model, run_name=name, store=path)
    return path


def _ids(store: Store, run: str) -> list[str]:
    return [sample.question_id for sample in store.samples(run)]


def _counted_on(store: Store, run: str, kept: Sequence[str]) -> list[Kind] | None:
    store.keep_questions(kept)
    return store.score_kinds(run, None, open_types(), kept=True)


def _counts_only(whole: Sequence[Kind], less: Sequence[Kind]) -> list[Kind]:
    """Each kind's samples less the left-out ones', its places and question id left as they were: what
    narrowing would be without looking up the rows that take a left-out one's place."""
    gone = {kind.row[2:]: kind.samples for kind in less}
    return [
        kind._replace(samples=kind.samples - gone.get(kind.row[2:], 0))
        for kind in whole
        if kind.samples != gone.get(kind.row[2:], 0)
    ]


def test_a_run_less_any_one_question_is_the_run_counted_without_it(store_path: Path) -> None:
    with Store(store_path, read_only=True) as store:
        moved = 0
        for run in RUNS:
            whole = store.score_kinds(run, None, open_types())
            assert whole is not None
            ids = _ids(store, run)
            for left_out in ids:
                expected = _counted_on(store, run, [i for i in ids if i != left_out])
                assert expected is not None
                assert store.narrowed_kinds(run, whole, [left_out]) == expected, (run, left_out)
                less = _counted_on(store, run, [left_out])
                assert less is not None
                moved += _counts_only(whole, less) != expected
        # the left-out row was a kind's first, last or least question id (or its only row) in many cases
        assert moved >= 10


def test_a_run_less_several_questions_is_the_run_counted_without_them(store_path: Path) -> None:
    rng = random.Random(7)
    with Store(store_path, read_only=True) as store:
        for run in RUNS:
            whole = store.score_kinds(run, None, open_types())
            assert whole is not None
            ids = _ids(store, run)
            for size in (2, 3, 5, len(ids) // 2, len(ids)):
                for _ in range(6):
                    left_out = rng.sample(ids, size)
                    expected = _counted_on(store, run, sorted(set(ids) - set(left_out)))
                    assert store.narrowed_kinds(run, whole, left_out) == expected, (run, left_out)


def test_rows_of_kinds_the_whole_run_did_not_have_are_not_narrowed(store_path: Path) -> None:
    with Store(store_path, read_only=True) as store:
        ids = _ids(store, "mixed")
        assert store.narrowed_kinds("mixed", [], ids[:2]) is None
        whole = store.score_kinds("constant", None, open_types())
        assert whole is not None and max(kind.samples for kind in whole) > 1
        fewer = [kind._replace(samples=1) for kind in whole]  # the run counted before some of its rows
        assert store.narrowed_kinds("constant", fewer, _ids(store, "constant")) is None


class _Erring(Model):
    """Answers every question with one of its options (`pick`: its place), or a text, and errs on the
    questions `failing`."""

    def __init__(self, failing: frozenset[str], pick: int) -> None:
        super().__init__("erring", ModelOptions())
        self.failing, self.pick = failing, pick

    def generate(self, requests: Sequence[GenerateRequest]) -> Iterator[ModelOutput]:
        for request in requests:
            if request.id in self.failing:
                yield ModelOutput(request.id, error="overloaded")
            else:
                picked = request.choices[self.pick] if request.choices else "文本"
                yield ModelOutput(request.id, text=f"答案：{picked}")


def test_runs_that_erred_are_compared_from_what_their_writers_kept_less_the_left_out_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of one exam, each erring on two questions of its own: each is counted on the 40 questions
    both answered as its writer's counts less the four it leaves out, with no run counted again on them,
    and every number shown is the one counted from the rows."""
    path = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model="random", run_name="a", store=path)
    with Store(path, read_only=True) as store:
        ids = _ids(store, "a")
    path.unlink()
    for name, failing, pick in (("a", ids[1:3], 0), ("b", ids[-2:], -1)):
        kaoshi.evaluate("sample", model=_Erring(frozenset(failing), pick), run_name=name, store=path)
    expected = counted_again(path, ["a", "b"], monkeypatch)
    shown = reported(path, ["a", "b"], keep=False)
    counted = Store.output_counts

    def left_out_only(store: Store, run: str, text_end: int, **among: object) -> object:
        assert "left_out" in among, "a run's outputs counted on the common questions"
        return counted(store, run, text_end, **among)  # type: ignore[arg-type]

    with counting_refused(monkeypatch, "a run on the common questions", (Store, "score_kinds")):
        monkeypatch.setattr(Store, "output_counts", left_out_only)
        assert reported(path, ["a", "b"]) == shown
        assert pages(path, ["a", "b"]) in expected
    assert shown in expected and '"n": 40' in shown


@pytest.mark.parametrize("run", ["mixed", "other", "third"])
def test_a_tally_less_the_left_out_rows_is_the_profile_counted_on_the_others(
    store_path: Path, run: str
) -> None:
    """The hand-made runs' samples have tokens, latencies, errors and answers cut off in a loop: their
    tally less the left-out rows' (read by key) is the profile counting the others makes."""
    rng = random.Random(run)
    with Store(store_path, read_only=True) as store:
        ids = _ids(store, run)
        whole = counted_tally(*store.output_counts(run, TAIL_CHARS))
        assert whole is not None and whole.timed and whole.loops and whole.errors
        for size in (1, 2, 5, len(ids) // 3, len(ids)):
            for _ in range(4):
                left_out = rng.sample(ids, size)
                less = counted_tally(*store.output_counts(run, TAIL_CHARS, left_out=left_out))
                assert less is not None
                store.keep_questions(left_out)
                assert less == counted_tally(*store.output_counts(run, TAIL_CHARS, kept=True))
                store.keep_questions(sorted(set(ids) - set(left_out)))
                narrowed = whole.less(less)
                assert narrowed is not None
                expected = counted_profile(*store.output_counts(run, TAIL_CHARS, kept=True))
                assert narrowed.profile().to_json() == expected.to_json()


def test_kinds_counted_from_other_rows_are_not_narrowed(store_path: Path, tmp_path: Path) -> None:
    """What the whole run counted is not of its rows now (a write between reading what was kept and
    narrowing it), or two of its stored groups read as the same (two kinds to SQLite, one once read: rows
    written by hand): never narrowed."""
    with Store(store_path, read_only=True) as store:
        whole = store.score_kinds("third", None, open_types())
        assert whole is not None
        alone = next(kind for kind in whole if kind.samples == 1)
        stale = [kind._replace(samples=2) if kind == alone else kind for kind in whole]
        assert store.narrowed_kinds("third", stale, [alone.row.question_id]) is None
    edited = tmp_path / "edited.sqlite"
    shutil.copyfile(store_path, edited)
    with Store(edited, read_only=True) as store:
        before = store.score_kinds("constant", None, open_types())
        assert before is not None
        shared = next(kind for kind in before if kind.samples > 1)
    with sqlite3.connect(edited) as db:
        alike = " AND ".join(f"s.{name} IS x.{name}" for name in _KIND_COLUMNS)
        (twin,) = db.execute(
            f"SELECT s.question_id FROM samples x JOIN samples s ON s.run = x.run AND {alike} "
            "WHERE x.run = 'constant' AND x.question_id = ? AND s.question_id != x.question_id",
            (shared.row.question_id,),
        ).fetchone()
        # the same group, stored with a space before it: still that JSON
        db.execute(
            "UPDATE samples SET question_group = ' ' || question_group WHERE run = 'constant' "
            "AND question_id = ?",
            (twin,),
        )
    with Store(edited, read_only=True) as store:
        kinds = store.score_kinds("constant", None, open_types())
        assert kinds is not None and len(kinds) == len(before) + 1
        assert store.narrowed_kinds("constant", kinds, [shared.row.question_id, twin]) is None


# the columns score_kinds groups a run's samples by (kaoshi.store.columns.KIND_COLUMNS; None: the score)
_KIND_COLUMNS = [name or "score" for name in KIND_COLUMNS]


def test_a_comparison_narrows_some_runs_and_counts_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run of 42 of the 44 questions (whole: each of its questions a common one), one erring on the other
    two (narrowed), and one a judge graded (its kinds counted with the judge's points, its profile
    narrowed): shown as counting every run shows it."""
    path = tmp_path / "s.sqlite"
    kaoshi.evaluate("sample", model="random", run_name="a", store=path, limit_total=42)
    with Store(path, read_only=True) as store:
        missing = {q.id for q in load_exam_result("sample").exam.questions} - set(_ids(store, "a"))
    assert len(missing) == 2
    kaoshi.evaluate("sample", model=_Erring(frozenset(missing), 0), run_name="b", store=path)
    kaoshi.evaluate("sample", model="constant:A", run_name="c", store=path)
    with Store(path) as store:
        open_answer = next(s for s in store.samples("c") if s.qtype == "open")
        store.add_grade("c", GradeRecord(open_answer.question_id, "judge-x", GradeStatus.OK, 6.0, 0.5, ()))
    with Store(path) as store:
        keep_counts(store, "c")  # as `kaoshi judge` keeps them as it ends
    narrowed: list[str] = []
    real_kinds, real_counts = Store.narrowed_kinds, Store.output_counts

    def kinds(store: Store, run: str, *args: object) -> object:
        narrowed.append(f"{run} kinds")
        return real_kinds(store, run, *args)  # type: ignore[arg-type]

    def counts(store: Store, run: str, text_end: int, **among: object) -> object:
        if "left_out" in among:
            narrowed.append(f"{run} outputs")
        return real_counts(store, run, text_end, **among)  # type: ignore[arg-type]

    expected = counted_again(path, ["a", "b", "c"], monkeypatch)
    monkeypatch.setattr(Store, "narrowed_kinds", kinds)
    monkeypatch.setattr(Store, "output_counts", counts)
    assert reported(path, ["a", "b", "c"], keep=False) in expected
    assert sorted(narrowed) == ["b kinds", "b outputs", "c outputs"]
