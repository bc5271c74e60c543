"""A run counted on a comparison's common questions, made from its kinds counted whole less those of the
questions left out (kaoshi.store.columns.narrowed_kinds, taken by kaoshi.api.counting where a run's writer
kept its counts, with its output tally: tests/unit/test_output_tally.py): the same kinds, counts, first and
last places and question ids as counting the run on those questions, whichever of its rows are left out,
and None where the whole kinds are not the run's."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import kaoshi
from kaoshi.api.counting import open_types
from kaoshi.models import GenerateRequest, Model, ModelOptions, ModelOutput
from kaoshi.store import Store
from kaoshi.store.columns import Kind
from tests.support.mixed_runs import counting_refused, three_runs
from tests.unit.test_kept_comparisons import counted_again, pages, reported

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
