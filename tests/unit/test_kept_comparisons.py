"""Comparisons kept in the store (issue 42; kaoshi.api.kept): `kaoshi report A B C`, `kaoshi compare` and the
viewer's compare page read from what an earlier report or compare kept are the same, byte for byte, as
counted again from the rows, and every kind of change to a compared run (new answers, a replaced answer,
rows changed or deleted in place, a judge's grades, a run written again or another renamed into its name)
makes the next one count again, never read it stale. Each change below changes what is shown, so that a
kept comparison taken for the changed rows would fail its test."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.analysis.outputs import output_profile
from kaoshi.analysis.stats import Differences, bootstrap_differences, paired_bootstrap, paired_differences
from kaoshi.api import kept as kept_module
from kaoshi.api import studies
from kaoshi.api.comparing import compare_stored
from kaoshi.api.counting import open_types, read_answers
from kaoshi.api.studies import compare
from kaoshi.report.differences import differences_among, differing_questions, key_differences
from kaoshi.results.grading import chosen_grader
from kaoshi.store import Store
from kaoshi.store.records import GradeRecord, GradeStatus, SampleStatus
from tests.support.compared_outputs import compared, counted_again, everything, pages, reported
from tests.support.mixed_runs import (
    CHANGED_IN_PLACE,
    add_new_question,
    counting_refused,
    mixed_store,
    settled_three_runs,
    sql,
    three_and_golden,
    three_runs,
    write_a_run_again,
    written_while_counted,
)
from tests.support.stores import SPEC, digest

RUNS = ["mixed", "other", "third"]


def nothing_counted(monkeypatch: pytest.MonkeyPatch) -> AbstractContextManager[None]:
    """No comparison counted again: each must come from what the store keeps."""
    counts = ((kept_module, "counted_comparison"), (studies, "_paired_study"))
    return counting_refused(monkeypatch, "the comparison", *counts)


def kept_kinds(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {kind.split()[0] for (kind,) in db.execute("SELECT kind FROM run_summaries")}


def side_by_side(path: Path) -> list[list[str]]:
    """The names of each benchmark's runs in the store, for the benchmarks with more than one."""
    with Store(path, read_only=True) as store:
        by_benchmark: dict[str, list[str]] = {}
        for record in store.runs():
            if record.spec.repeats == 1:
                by_benchmark.setdefault(record.spec.benchmark, []).append(record.name)
    return [names for names in by_benchmark.values() if len(names) > 1]


def test_a_kept_comparison_is_the_comparison_counted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three runs with errors, an id holding another question and a judge's grades, and the golden runs
    written again by this kaoshi: the first report and compare count and keep, the next read what was
    kept (no pairing, no count), and every one, the viewer's pages too, is the one counted from the rows."""
    three, rewritten = three_and_golden(tmp_path)
    compared_runs = [
        (three, RUNS),
        (three, ["third", "mixed"]),
        *((rewritten, n) for n in side_by_side(rewritten)),
    ]
    assert len(compared_runs) >= 3
    for path, names in compared_runs:
        expected = counted_again(path, names, monkeypatch)
        assert everything(path, names) == expected  # counted, then kept
        assert {"comparison", "paired"} <= kept_kinds(path)
        with nothing_counted(monkeypatch):
            assert everything(path, names) == expected
            assert everything(path, names, keep=False) == expected
    assert '"conflicting_ids": [\n    "q/2"\n  ]' in reported(three, RUNS)


def test_a_report_with_another_grader_is_counted_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report kept with each run's most recent judge is not taken for one with another grader, and back."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    with Store(path) as store:
        store.add_grade("third", GradeRecord("q/11", "judge-a", GradeStatus.OK, 6.0, 0.6, ()))
        store.add_grade("mixed", GradeRecord("q/5", "judge-z", GradeStatus.OK, 1.0, 0.1, ()))
        store.add_grade("third", GradeRecord("q/11", "judge-z", GradeStatus.OK, 2.0, 0.2, ()))
    names = ["mixed", "third"]
    with monkeypatch.context() as patched:
        patched.setattr(Store, "kept_summaries", lambda *_: {})
        by_judge_a = reported(path, names, keep=False, grader="judge-a")
        by_the_latest = reported(path, names, keep=False)
    assert by_judge_a != by_the_latest
    assert reported(path, names) == by_the_latest
    assert reported(path, names, grader="judge-a") == by_judge_a
    assert reported(path, names) == by_the_latest


def test_a_compare_by_other_groupings_is_counted_for_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kaoshi compare` keeps the groupings it was asked for: asked for others, it counts again."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))

    def shown(by: tuple[str, ...]) -> str:
        return json.dumps(compare(RUNS, store=path, by=by, resamples=300).to_json(), default=str)

    with monkeypatch.context() as patched:
        patched.setattr(Store, "kept_summaries", lambda *_: {})
        by_domain, by_subject = shown(("domain",)), shown(("subject", "category"))
    assert shown(("domain",)) == by_domain
    with nothing_counted(monkeypatch):
        assert shown(("domain",)) == by_domain
        with pytest.raises(AssertionError, match="counted again"):
            shown(("subject", "category"))
    assert shown(("subject", "category")) == by_subject
    with nothing_counted(monkeypatch):
        assert shown(("subject", "category")) == by_subject
        assert '"category"' in shown(("category",))  # a grouping kept is read, whichever others are asked


def replace_an_answer(store: Store) -> None:
    one = next(s for s in store.samples("third") if s.correct)
    store.add_sample("third", replace(one, correct=False, score=0.0, answer=frozenset("B")))


def replace_the_last_row_written(store: Store) -> None:
    """An answer replaced again while it is the table's last row: SQLite gives the new row a larger rowid
    still, so the run's signature changes though its count does not."""
    one = next(s for s in store.samples("third") if s.correct)
    store.add_sample("third", replace(one, correct=False, score=0.0))
    store.add_sample("third", replace(one, response="again"))
    store.add_sample("third", replace(one, correct=False, score=0.0, answer=frozenset("B")))


def rename_another_run_into_its_name(store: Store) -> None:
    """A compared run moved aside and another, with other answers, renamed into its name."""
    store.open_run("flipped", SPEC)
    for one in store.samples("other"):
        store.add_sample("flipped", replace(one, correct=None if one.correct is None else not one.correct))
    store.finish_run("flipped")
    store.rename_run("other", "other-before")
    store.rename_run("flipped", "other")


CHANGES: dict[str, Callable[[Store], None]] = {
    "new question answered": add_new_question,
    "an answer replaced": replace_an_answer,
    "the table's last row replaced": replace_the_last_row_written,
    **CHANGED_IN_PLACE,
    "an answer read otherwise in place": sql(
        "UPDATE samples SET answer = '\"B\"' WHERE run = 'third' AND question_id = 'q/1'"
    ),
    "a run written again under its name": write_a_run_again,
    "another run renamed into a compared run's name": rename_another_run_into_its_name,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_every_change_to_a_compared_run_is_counted_again(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    before = everything(path, RUNS)  # counted and kept
    assert {"comparison", "paired"} <= kept_kinds(path)
    with Store(path) as store:
        CHANGES[change](store)
    expected = counted_again(path, RUNS, monkeypatch)
    assert expected != before, "the change must show, or a stale comparison would pass"
    assert everything(path, RUNS) == expected  # what was kept is not taken for the changed rows
    with nothing_counted(monkeypatch):
        assert everything(path, RUNS) == expected  # and what is kept now is the new comparison


def test_a_comparison_that_changes_while_it_is_counted_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    with written_while_counted(path, monkeypatch):
        reported(path, RUNS)
    assert "comparison" not in kept_kinds(path)
    assert everything(path, RUNS) == counted_again(path, RUNS, monkeypatch)


def test_the_viewer_reads_a_kept_comparison_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.sqlite"
    before = settled_three_runs(path)
    expected = pages(path, RUNS)
    assert kept_kinds(path) == set() and digest(path) == before
    reported(path, RUNS)  # `kaoshi report A B C` keeps it
    with nothing_counted(monkeypatch):
        assert pages(path, RUNS) == expected


def test_a_kept_comparison_leaves_no_wal(tmp_path: Path) -> None:
    """`kaoshi report A B` and `kaoshi compare` keep through a write connection of their own while their
    reader is still open: what they kept is checkpointed into the file, no -wal left beside it."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    wal = Path(f"{path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    reported(path, RUNS)
    assert "comparison" in kept_kinds(path)
    assert not wal.exists() or wal.stat().st_size == 0
    compared(path, RUNS)
    assert "paired" in kept_kinds(path)
    assert not wal.exists() or wal.stat().st_size == 0


def test_a_kept_comparison_keeps_a_few_numbers_of_the_paired_outcomes(tmp_path: Path) -> None:
    """What is kept of the paired outcomes is each run's differences from the first counted by value, and
    the bootstrap from them is the bootstrap of the outcomes; a kept comparison has no baseline but its
    first run."""
    a = [1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 0.25]
    b = [1.0, 1.0, 0.0, 1.0, 0.5, 0.5, 1.0]
    counted = paired_differences(a, b)
    assert counted == Differences(7, (-1.0, 0.0, 0.5, 0.75, 1.0), (1, 3, 1, 1, 1), counted.mean)
    assert Differences.from_json(json.loads(json.dumps(counted.to_json()))) == counted
    assert bootstrap_differences(counted, 300, seed=3) == paired_bootstrap(a, b, 300, seed=3)
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=())
    reported(path, RUNS)
    kept = compare_stored(RUNS, store=path)
    assert kept.kept_outcomes is not None and all(not s.outcomes for s in kept.summaries)
    with pytest.raises(ValueError, match="cannot be reordered"):
        kept.reordered([1, 0, 2])


def test_an_output_profile_reads_back_the_same(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=1)
    with Store(path, read_only=True) as store:
        profile = output_profile(store.samples("mixed"))
    assert profile.tokens_out is not None and profile.model_time_s is not None and profile.loops
    assert type(profile).from_json(json.loads(json.dumps(profile.to_json()))) == profile


def test_a_page_of_differences_is_made_from_its_questions_alone(tmp_path: Path) -> None:
    """Which questions differ, kept as their ids, and a page of them made again from those questions' rows:
    what key_differences finds over every row; an id a run no longer holds is left out."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    with Store(path) as store:
        store.add_sample("other", replace(store.samples("other")[0], status=SampleStatus.UNPARSED))
        records = [store.get_run(name) for name in RUNS]
        graders = [chosen_grader(store, name, None) for name in RUNS]
        rows = read_answers(store, records, graders)
        assert rows is not None
        found, paired, conflicts = key_differences(rows)
        differing = differing_questions(rows)
        assert differing.ids == tuple(d.question_id for d in found) and len(found) > 10
        assert (differing.paired, differing.conflicts) == (paired, conflicts)
        page = [*differing.ids[3:9], "q/missing"]
        looked_up = [
            store.answer_keys(name, grader, open_types(), ordered=False, among=page) or []
            for name, grader in zip(RUNS, graders, strict=True)
        ]
    assert differences_among(looked_up, page) == found[3:9]


def test_runs_of_one_exam_are_compared_from_what_their_writers_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every question of each run is a common one: counted on them, each run is what its writer counted
    and kept as it ended, so the first comparison reads that and counts no run again (only pairs them),
    and shows what counting from the rows shows."""
    import kaoshi

    path = tmp_path / "s.sqlite"
    for name, model in (("a", "random"), ("b", "constant:A")):
        kaoshi.evaluate("sample", model=model, run_name=name, store=path)
    expected = counted_again(path, ["a", "b"], monkeypatch)
    with counting_refused(monkeypatch, "a whole run", (Store, "score_kinds"), (Store, "output_counts")):
        assert everything(path, ["a", "b"]) == expected


def test_a_run_resumed_while_it_is_compared_is_counted_on_the_common_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a run's writer kept is taken only if it was counted from the rows the comparison paired: one
    kept after them (a run resumed meanwhile) could hold questions that are not among them."""
    import kaoshi

    path = tmp_path / "s.sqlite"
    for name, model in (("a", "random"), ("b", "constant:A")):
        kaoshi.evaluate("sample", model=model, run_name=name, store=path)
    read_before = Store.summary_signatures

    def before_a_resume(store: Store, runs: object) -> dict[str, object]:
        found = dict(read_before(store, runs))  # type: ignore[arg-type]
        if "a" in found:
            found["a"] = ("rows read before the run was resumed",)
        return found

    monkeypatch.setattr(Store, "summary_signatures", before_a_resume)
    with counting_refused(monkeypatch, "a whole run", (Store, "score_kinds")), pytest.raises(AssertionError):
        compare_stored(["a", "b"], store=path, keep=False)
