"""Summaries from score rows (issue 42): a run's numbers read as one small row a sample (no prompt, no
question JSON decoded, no whole output) are the numbers of its whole samples, on the golden store and on
hand-made rows with every outcome, open answers graded, groups, k samples a question, cut-off loops and
rows written before the fingerprint column."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from kaoshi.analysis.outputs import TAIL_CHARS
from kaoshi.api import boards, comparing, kept
from kaoshi.api.boards import leaderboard
from kaoshi.api.summary import benchmark_metrics, load_run, load_scores, summarize
from kaoshi.benchmarks import leaderboard_layout
from kaoshi.report.compare import ComparedRuns, compare_runs, render_comparison
from kaoshi.report.leaderboard import build_board, leaderboard_table
from kaoshi.store import RunRecord, Store, StoreError, columns
from kaoshi.store.columns import score_row
from kaoshi.store.pairing import question_fingerprint
from kaoshi.store.records import GradeRecord, GradeStatus, SampleStatus
from tests.support.mixed_runs import GOLDEN_FILE, mixed_store, rewrite, three_runs
from tests.support.stores import SPEC, sample


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    """A copy of the golden store: opening the file itself, even read-only, leaves its -shm and -wal."""
    copy = tmp_path / "golden.sqlite"
    shutil.copyfile(GOLDEN_FILE, copy)
    return copy


def both_ways(path: Path, run: str, grader: str | None = None) -> tuple[dict[str, object], dict[str, object]]:
    """(the summary from score rows, the summary from whole samples) as JSON; the summary SQLite counts
    kind by kind (kaoshi.summarize) is the first's, whole."""
    counted = summarize(run, store=path, grader=grader)
    rows = load_scores(run, store=path, grader=grader).summarize()
    whole = load_run(run, store=path, grader=grader).summarize().to_json()
    assert counted == rows and counted.outcomes == rows.outcomes
    return rows.to_json(), whole


def test_the_golden_runs_summarise_the_same_from_score_rows(tmp_path: Path) -> None:
    copy = tmp_path / "golden.sqlite"
    shutil.copyfile(GOLDEN_FILE, copy)
    seen_graders = 0
    with Store(copy, read_only=True) as store:
        runs = [(record.name, store.graders(record.name)) for record in store.runs()]
    for run, graders in runs:
        for grader in (None, *graders):
            rows, whole = both_ways(copy, run, grader)
            assert rows == whole, (run, grader)
            seen_graders += grader is not None
    assert len(runs) >= 3 and seen_graders >= 1


def boards_json(path: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> list[dict[str, object]]:
    """The store's boards as JSON; with `monkeypatch`, counted by SQLite or failing (no board built from
    score rows)."""
    if monkeypatch is not None:

        def from_score_rows(*_: object, **__: object) -> None:
            raise AssertionError("the board was built from score rows, not counted by SQLite")

        monkeypatch.setattr(boards, "build_board", from_score_rows)
    return [board.to_json(leaderboard_table(board)) for board in leaderboard(store=path)]


def whole_boards_json(path: Path) -> list[dict[str, object]]:
    """The boards build_board makes from each run's whole samples, as before score rows."""
    found = []
    with Store(path, read_only=True) as store:
        by_benchmark: dict[str, list[RunRecord]] = {}
        for record in store.runs():
            by_benchmark.setdefault(record.spec.benchmark, []).append(record)
    for name in sorted(by_benchmark):
        loaded = [load_run(r.name, store=path) for r in by_benchmark[name]]
        board = build_board(
            name,
            [(one.run, list(one.samples), one.grader) for one in loaded],
            leaderboard_layout(name),
            metrics=benchmark_metrics(name),
        )
        found.append(board.to_json(leaderboard_table(board)))
    return found


def test_the_golden_boards_counted_by_sqlite_are_the_boards_of_whole_samples(
    tmp_path: Path, golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewritten = tmp_path / "rewritten.sqlite"
    rewrite(golden, rewritten)
    whole, from_rows = whole_boards_json(golden), boards_json(golden)
    counted = boards_json(rewritten, monkeypatch)
    assert counted == whole == from_rows
    assert len(counted) >= 3


def test_a_board_with_errors_conflicts_and_grades_counted_by_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three runs of the hand-made exam, one holding another question under an id and one with another
    judge's grades: the board SQLite counts is the board of their whole samples."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    whole = whole_boards_json(path)
    counted = boards_json(path, monkeypatch)
    assert counted == whole
    assert counted[0]["conflicting_ids"] == ["q/2"]


def test_the_golden_runs_written_by_this_kaoshi_are_counted_by_sqlite_to_the_same_numbers(
    tmp_path: Path, golden: Path
) -> None:
    """The golden store predates the group column, so it is summarised from its rows; written again by
    this kaoshi (every sample and grade), each run is counted kind by kind to the same summary."""
    rewritten = tmp_path / "rewritten.sqlite"
    rewrite(golden, rewritten)
    with Store(golden, read_only=True) as source:
        names = [(record.name, source.graders(record.name)) for record in source.runs()]
    counted_by_kind = 0
    for run, graders in names:
        for grader in (None, *graders):
            whole = load_run(run, store=golden, grader=grader).summarize().to_json()
            counted = summarize(run, store=rewritten, grader=grader).to_json()
            assert counted == whole, (run, grader)
        with Store(rewritten, read_only=True) as store:
            counted_by_kind += store.score_kinds(run, None, ["open"]) is not None
    assert counted_by_kind == len(names) >= 3


@pytest.mark.parametrize("repeats", [1, 3])
def test_hand_made_rows_summarise_the_same_from_score_rows(tmp_path: Path, repeats: int) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats)
    for grader in (None, "judge-a"):
        rows, whole = both_ways(path, "mixed", grader)
        assert rows == whole, grader
    rows, _ = both_ways(path, "mixed", "judge-a")
    assert rows["graded_by"] == "judge-a" and rows.get("k", 1) == repeats
    assert rows["judged"] == 5  # the five open answers judge-a graded (none has a score of its own)
    assert rows["outputs"]["loops"] > 0  # type: ignore[index]
    assert set(rows["groups"]["group"]) == {"理科", "文科", "(none)"}  # type: ignore[index]


def test_score_rows_are_the_rows_of_the_whole_samples(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path)
    with Store(path, read_only=True) as store:
        read = store.score_rows("mixed", text_end=TAIL_CHARS)
        whole = [score_row(s, TAIL_CHARS) for s in store.samples("mixed")]
        repeats = store.score_rows("mixed", repeats=True, text_end=TAIL_CHARS)
        whole_repeats = [score_row(s, TAIL_CHARS) for s in store.iter_repeat_samples("mixed")]
    assert read == whole and len(read) == 60
    assert repeats == whole_repeats and {r.sample for r in repeats} == {1, 2}


@pytest.mark.parametrize("how", ["column emptied", "column dropped"])
def test_rows_written_before_the_fingerprint_and_group_columns_read_them_from_the_question(
    tmp_path: Path, how: str
) -> None:
    """A store from before the columns: its rows are fingerprinted from their questions and their groups
    read from there, so pairing and the numbers are unchanged; opened for writing, the columns are added
    and new rows carry them."""
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=1)
    with Store(path, read_only=True) as store:
        expected = [question_fingerprint(s) for s in store.samples("mixed")]
    before = both_ways(path, "mixed")
    with sqlite3.connect(path) as db:
        if how == "column emptied":
            db.execute("UPDATE samples SET fingerprint = NULL, question_group = NULL")
        else:
            db.execute("DROP INDEX samples_scores")  # it holds the columns
            db.execute("ALTER TABLE samples DROP COLUMN fingerprint")
            db.execute("ALTER TABLE samples DROP COLUMN question_group")
    with Store(path, read_only=True) as store:
        read = store.score_rows("mixed", text_end=TAIL_CHARS)
    assert [r.fingerprint for r in read] == expected
    assert {r.group for r in read} == {"理科", "文科", None}
    assert both_ways(path, "mixed") == before
    with Store(path) as store:  # opened for writing: the column is back, and a new row is fingerprinted
        store.add_sample("mixed", sample("new/1"))
    with sqlite3.connect(path) as db:
        stored = db.execute("SELECT fingerprint FROM samples WHERE question_id = 'new/1'").fetchone()[0]
    assert stored == question_fingerprint(sample("new/1"))


@pytest.mark.parametrize("repeats", [1, 3])
def test_the_output_counts_are_the_profile_of_the_samples(tmp_path: Path, repeats: int) -> None:
    """The samples as the output profile counts them (the latencies packed by kind), of a whole run and of
    the questions a comparison keeps, make the profile of those samples read whole, and the latencies are
    theirs."""
    from kaoshi.analysis.outputs import counted_profile, output_profile

    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=repeats)
    with Store(path, read_only=True) as store:
        samples = store.all_samples("mixed")
    kept = sorted({s.question_id for s in samples})[::3]
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        for among in (None, kept):
            if among is not None:
                columns.keep_questions(db, among)
            counted, times = columns.output_counts(db, "mixed", TAIL_CHARS, kept=among is not None)
            chosen = [s for s in samples if among is None or s.question_id in among]
            latencies = [
                s.latency_s for s in chosen if s.status != SampleStatus.ERROR and s.latency_s is not None
            ]
            assert sorted(times) == sorted(latencies) and len(set(latencies)) > 3
            assert counted_profile(counted, times) == output_profile(chosen)


def test_an_errors_latency_is_never_read(tmp_path: Path) -> None:
    """An error's latency counts nowhere, so whatever it holds (text written by another tool) leaves the
    output counts as they were."""
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=1)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        before = columns.output_counts(db, "mixed", TAIL_CHARS)
    with sqlite3.connect(path) as db:
        changed = db.execute("UPDATE samples SET latency_s = 'n/a' WHERE status = 'error'").rowcount
    assert changed > 3
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        assert columns.output_counts(db, "mixed", TAIL_CHARS) == before


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("status", "'exploded'", "unknown status 'exploded'"),
        ("gold", "'{not json'", "its gold is not readable JSON"),
        ("answer", "'{\"a\": 1}'", "its answer is not an answer kaoshi reads"),
    ],
)
def test_a_value_kaoshi_cannot_read_names_the_store_run_and_question(
    tmp_path: Path, column: str, value: str, said: str
) -> None:
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=1)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE samples SET {column} = {value} WHERE question_id = 'q/7'")
    for read in (load_scores, summarize, answer_rows):  # score rows, kinds counted by SQLite, answer rows
        with pytest.raises(StoreError) as caught:
            read("mixed", store=path)
        message = str(caught.value)
        assert str(path) in message and "run 'mixed'" in message and "question 'q/7'" in message
        assert said in message


def answer_rows(run: str, *, store: Path) -> object:
    """The run's answer rows, as a report comparing it reads them (kaoshi.api.counting.read_answers)."""
    from kaoshi.api.counting import open_types

    with Store(store, read_only=True) as opened:
        return opened.answer_keys(run, None, open_types())


def test_of_values_kaoshi_cannot_read_the_first_met_is_named(tmp_path: Path) -> None:
    """Rows holding several values kaoshi cannot read: the first met in question order is named, the
    statuses before the golds and answers, a gold before its row's answer."""
    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=1)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET answer = '{' WHERE question_id IN ('q/4', 'q/9')")
        db.execute("UPDATE samples SET gold = '{' WHERE question_id = 'q/6'")
    for read in (load_scores, answer_rows):
        with pytest.raises(StoreError, match=r"question 'q/4': its answer is not readable JSON"):
            read("mixed", store=path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET gold = '{' WHERE question_id = 'q/4'")
        db.execute("UPDATE samples SET status = 'exploded' WHERE question_id IN ('q/8', 'q/5')")
    for read in (load_scores, answer_rows):
        with pytest.raises(StoreError, match=r"question 'q/5': unknown status 'exploded'"):
            read("mixed", store=path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET status = 'ok' WHERE status = 'exploded'")
    for read in (load_scores, answer_rows):
        with pytest.raises(StoreError, match=r"question 'q/4': its gold is not readable JSON"):
            read("mixed", store=path)


def test_a_run_of_one_sample_a_question_is_counted_by_sqlite_from_the_index(tmp_path: Path) -> None:
    """kaoshi.summarize reads no sample row of a store written by this kaoshi: each statement it runs on the
    run's samples searches the index samples_scores, and only the cut-off answers' rows are read, for
    their ends."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.open_run("one", SPEC)
        for i in range(30):
            cut = i % 10 == 0
            store.add_sample(
                "one",
                sample(
                    f"q/{i}",
                    position=i,
                    correct=i % 3 == 0,
                    truncated=cut,
                    response="答案" * 300,
                    latency_s=0.1,
                ),
            )
        store.finish_run("one")
    statements: list[str] = []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        db.set_trace_callback(statements.append)
        kinds = columns.score_kinds(db, path, "one", None, ["open"])
        keys = columns.outcome_keys(db, "one")
        outputs, times = columns.output_counts(db, "one", TAIL_CHARS)
        db.set_trace_callback(None)
        plans = [
            [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {statement}")]
            for statement in statements
            if " FROM samples" in statement
        ]
    assert kinds is not None and sum(kind.samples for kind in kinds) == 30
    assert len(keys) == 30 and sum(n for _, n in outputs) == 30 and len(times) == 30
    assert sum(bool(row.response_end) for row, _ in outputs) == 3
    # the kinds, the outcomes, the output profile's kinds with their latencies, the cut-off answers' ends
    assert len(plans) == 4, statements
    for plan in plans:
        searches = [step for step in plan if step.startswith(("SEARCH", "SCAN"))]
        assert searches and all("INDEX samples_scores" in step for step in searches), plan
    # all but the ends of the cut-off answers from the index alone
    assert sum("COVERING INDEX samples_scores" in plan[0] for plan in plans) == 3


@pytest.mark.parametrize("repeats", [1, 2])
def test_groups_that_are_not_text_read_as_the_question_holds_them(tmp_path: Path, repeats: int) -> None:
    """A plugin's question may have a group of any JSON value: it is grouped as the whole sample reads
    it (true stays true, not 1), however the run is read."""
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.open_run("g", replace(SPEC, repeats=repeats))
        for i, group in enumerate([True, False, True]):
            question = {"stem": f"题{i}", **({"group": group} if group is not None else {})}
            for k in range(repeats):
                store.add_sample("g", sample(f"q/{i}", position=i, question=question, sample=k))
        store.finish_run("g")
    rows, whole = both_ways(path, "g")
    assert rows == whole
    assert set(rows["groups"]["group"]) == {True, False}  # type: ignore[index]


def shown_comparison(compared: ComparedRuns) -> str:
    """`kaoshi report A B ...` as JSON, then as a table."""
    return render_comparison(compared, "json", resamples=200) + render_comparison(
        compared, "table", resamples=200
    )


def whole_comparison(path: Path, names: list[str]) -> str:
    """The comparison of the runs' whole samples, as before score rows."""
    loaded = {name: load_run(name, store=path) for name in names}
    whole = compare_runs(
        [(one.run, list(one.samples)) for one in loaded.values()],
        lambda run, samples: loaded[run.name].summarize(None, None, samples),
    )
    return shown_comparison(whole)


def compared_both_ways(path: Path, names: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """`kaoshi report A B ...` counted by SQLite on the common questions (failing when it is not), and
    from the runs' score rows."""
    with monkeypatch.context() as patched:

        def from_score_rows(*_: object, **__: object) -> None:
            raise AssertionError("the comparison was made from score rows, not counted by SQLite")

        patched.setattr(comparing, "compare_runs", from_score_rows)
        counted = shown_comparison(comparing.compare_stored(names, store=path))
    with monkeypatch.context() as patched:
        patched.setattr(kept, "counted_comparison", lambda *_, **__: None)
        rows = shown_comparison(comparing.compare_stored(names, store=path))
    return counted, rows


def side_by_side(path: Path) -> list[list[str]]:
    """The names of each benchmark's runs in the store, for the benchmarks with more than one."""
    with Store(path, read_only=True) as store:
        by_benchmark: dict[str, list[str]] = {}
        for record in store.runs():
            by_benchmark.setdefault(record.spec.benchmark, []).append(record.name)
    return [names for names in by_benchmark.values() if len(names) > 1]


def test_runs_compared_with_errors_conflicts_and_grades_counted_by_sqlite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kaoshi report A B C` on the board's three runs (errors, an id holding another question, another
    judge's grades), and on runs with no question in common: counted by SQLite, the comparison of their
    score rows and of their whole samples."""
    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8", "q/13"))
    with Store(path) as store:
        samples = store.samples("mixed")
        store.open_run("apart", SPEC)  # no question in common with the others
        for one in samples[:10]:
            store.add_sample("apart", replace(one, question_id=one.question_id + "x"))
        store.finish_run("apart")
        # the same answers in the opposite order: a subject's group is its first sample's, in each
        # run's own order whichever run it is compared with
        store.open_run("reversed", SPEC)
        for one in samples:
            store.add_sample("reversed", replace(one, position=59 - one.position))
        store.finish_run("reversed")
    for names in (
        ["mixed", "other", "third"],
        ["third", "mixed"],
        ["mixed", "apart"],
        ["mixed", "reversed"],
        ["reversed", "other"],
    ):
        counted, rows = compared_both_ways(path, names, monkeypatch)
        assert counted == rows == whole_comparison(path, names), names
    counted, _ = compared_both_ways(path, ["mixed", "third"], monkeypatch)
    assert '"conflicting_ids": [\n    "q/2"\n  ]' in counted


def test_the_golden_runs_compared_by_sqlite_are_compared_the_same(
    tmp_path: Path, golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each benchmark's golden runs side by side (`kaoshi report A B ...`), written again by this kaoshi
    and counted by SQLite: the comparison of their whole samples in the golden store."""
    rewritten = tmp_path / "rewritten.sqlite"
    rewrite(golden, rewritten)
    compared = side_by_side(golden)
    for names in compared:
        counted, rows = compared_both_ways(rewritten, names, monkeypatch)
        assert counted == rows == whole_comparison(golden, names), names
    assert len(compared) >= 2


def test_the_questions_where_runs_differ_are_found_the_same_from_answer_rows(
    tmp_path: Path, golden: Path
) -> None:
    """The viewer's compare page: the differences found from each run's answer rows (the index) are the
    ones found from their score rows, with errors, an id holding another question and a judge's grades;
    and in each benchmark's golden runs written again by this kaoshi."""
    from kaoshi.api.counting import open_types
    from kaoshi.report.differences import Differing, differing_questions
    from kaoshi.results.grading import chosen_grader
    from kaoshi.store.pairing import AnswerRow
    from kaoshi.view.compare import differences, key_differences

    def answer_rows(path: Path, names: list[str]) -> list[list[AnswerRow]]:
        rows = []
        with Store(path, read_only=True) as store:
            for index, name in enumerate(names):
                grader = chosen_grader(store, name, None)  # as load_scores chooses it
                found = store.answer_keys(name, grader, open_types(), ordered=index == 0)
                assert found is not None
                rows.append(found)
        return rows

    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=1)
    with Store(path) as store:
        samples = store.samples("mixed")
        store.open_run("other", SPEC)
        for one in samples:
            changed = one
            if one.correct is not None and int(one.question_id.split("/")[1]) % 3 == 0:
                changed = replace(one, correct=not one.correct, answer=frozenset("B"))
            if one.question_id == "q/2":
                changed = replace(changed, question={**one.question, "stem": "另一道题"})
            if one.question_id == "q/8":
                changed = replace(changed, status=SampleStatus.ERROR, correct=None, answer=None, error="x")
            store.add_sample("other", changed)
        store.finish_run("other")
        store.add_grade("other", GradeRecord("q/5", "judge-b", GradeStatus.OK, 3.0, 0.3, ()))
    cases = [(path, ["mixed", "other"]), (path, ["other", "mixed"])]
    rewritten = tmp_path / "rewritten.sqlite"
    rewrite(golden, rewritten)
    cases += [(rewritten, names) for names in side_by_side(golden)]
    for where, names in cases:
        rows = answer_rows(where, names)
        found = key_differences(rows)
        expected = differences([load_scores(name, store=where).rows for name in names])
        assert found == expected, (where.name, names)
        differing = differing_questions(rows)  # what the comparison keeps of them
        assert differing == Differing(tuple(d.question_id for d in found[0]), found[1], found[2])
    mixed = key_differences(answer_rows(path, ["mixed", "other"]))
    assert mixed[0] and mixed[2] == ("q/2",) and "q/8" in {d.question_id for d in mixed[0]}


@pytest.mark.parametrize("seed", range(8))
def test_which_questions_differ_is_what_the_differences_are_made_of(seed: int) -> None:
    """differing_questions tells the runs' answers apart as a page of differences shows them: answers
    stored otherwise but shown alike ('"A"' and '["A"]', a wrong answer unparsed or marked wrong) do not
    differ, answers shown otherwise do; with runs in the first run's order or each in its own, an id
    holding another question and questions some run lacks."""
    import random

    from kaoshi.report.differences import Differing, differing_questions, key_differences

    rng = random.Random(seed)
    answers = ['"A"', '["A"]', '"B"', '["A", "B"]', "true", "null", None]
    outcomes = [("ok", 1, 1.0), ("ok", 0, 0.0), ("unparsed", 0, 0.0), ("error", None, None)]
    outcomes.append(("ok", None, 0.5))  # an open answer judged

    def row(question: int, content: str) -> tuple[object, ...]:
        status, correct, score = rng.choice(outcomes)
        qtype = rng.choice(["single", "multi", "open"])
        return f"q/{question}", content, status, correct, score, rng.choice(answers), '"A"', qtype

    questions = range(30)
    runs = []
    for r in range(rng.randint(1, 4)):
        held = [q for q in questions if rng.random() < 0.9]
        if r and rng.random() < 0.5:
            rng.shuffle(held)
        runs.append([row(q, "another" if q % 11 == r else "same") for q in held])
    found, paired, conflicts = key_differences(runs)  # type: ignore[arg-type]
    assert differing_questions(runs) == Differing(  # type: ignore[arg-type]
        tuple(d.question_id for d in found), paired, conflicts
    )


@pytest.mark.parametrize("repeats", [1, 3])
def test_a_summary_read_without_outcomes_is_the_summary_without_them(tmp_path: Path, repeats: int) -> None:
    """The viewer's run page shows a summary and never pairs it: read without its per-question outcomes
    (a sixth of a big run's page), it is the same summary with none."""
    from kaoshi.api.summary import read_summary

    path = tmp_path / "s.sqlite"
    mixed_store(path, repeats=repeats)
    with Store(path, read_only=True) as store:
        whole = read_summary(store, "mixed")
        shown = read_summary(store, "mixed", outcomes=False)
    assert whole.outcomes and shown.outcomes == {}
    assert shown == replace(whole, outcomes={})


def test_a_boards_summaries_hold_no_per_question_outcomes_however_it_was_counted(
    tmp_path: Path, golden: Path
) -> None:
    """A board ranks runs and never pairs their answers: counted by SQLite or built from score rows (the
    golden store predates the columns SQLite counts from), its summaries hold no outcomes."""
    rewritten = tmp_path / "rewritten.sqlite"
    rewrite(golden, rewritten)
    for path in (golden, rewritten):
        for board in leaderboard(store=path):
            summaries = [*board.compared.summaries, *(entry.summary for entry in board.entries)]
            assert summaries and all(summary.outcomes == {} for summary in summaries), path.name
            assert any(summary.overall.n for summary in summaries)
