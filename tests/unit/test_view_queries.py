"""The viewer's SQL: each filter of the samples page (table-driven), the outcome rule against the HTML
report's, paging through the primary key, the live counts against `kaoshi runs`, links that survive any
run name, and which hosts it serves on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kaoshi.api.summary import load_run, runs
from kaoshi.errors import InputError
from kaoshi.report.html import outcome
from kaoshi.results.grading import apply_grades
from kaoshi.store import GradeRecord, Store
from kaoshi.view import live as live_module
from kaoshi.view.filters import PAGE_SIZE, SampleFilter, choice_counts, like_pattern, matching
from kaoshi.view.live import NEW_COUNTS_SQL, Counts, LiveRun, LiveTallies
from kaoshi.view.queries import Signature, page_query, reading, run_signature, sample_cells, sample_rows
from kaoshi.view.server import check_host, is_loopback
from kaoshi.view.state import store_state
from kaoshi.view.urls import compare_url, run_url, split_run_path
from tests.support.stores import SPEC, sample, stored_run

GRADER = "careful:mock:judge"
SAMPLES = [
    sample("q-01", qtype="single", gold=frozenset("A"), answer=frozenset("A"), points=1.0, score=1.0),
    sample("q-02", qtype="single", gold=frozenset("A"), answer=frozenset("B"), correct=False, score=0.0),
    sample("q-03", status="unparsed", answer=None, correct=False, score=0.0, response="不知道 100% 确定"),
    sample("q-04", status="ambiguous", answer=None, correct=False, score=0.0, response="A或C 100x"),
    sample("q-05", status="error", answer=None, correct=None, score=None, response=None, error="timeout"),
    sample("q-06", qtype="open", answer="文本", correct=None, score=None, domain=None, points=5.0),
    sample("q-07", qtype="open", answer="文本", correct=None, score=None, domain=None, points=5.0),
    sample("q-08", qtype="open", answer="文本", correct=None, score=None, domain=None, points=5.0),
    sample("q-09", correct=False, answer=frozenset("A"), score=0.0, truncated=True, response="答案：A_cut"),
    sample("q-10", qtype="judge", gold=True, answer=True, points=1.0, score=1.0, subject="法律"),
    sample("q-11", question={"stem": "下列关于<script>的说法"}, category="STEM", response="答案：AB"),
]
GRADES = [
    GradeRecord("q-07", GRADER, "ok", 6.0, 3.0),  # type: ignore[arg-type]
    GradeRecord("q-08", GRADER, "unparsed", None, None),  # type: ignore[arg-type]
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return stored_run(tmp_path / "store.sqlite", SAMPLES, GRADES)


def shown(store: Path, chosen: SampleFilter) -> list[str]:
    with reading(store) as db:
        rows, _ = sample_rows(db, "r", GRADER, chosen)
    return [row.question_id for row in rows]


def test_the_outcome_is_the_html_reports(store: Path) -> None:
    graded = apply_grades(SAMPLES, {g.question_id: g for g in GRADES})
    expected = {s.question_id: outcome(s) for s in graded}
    with reading(store) as db:
        rows, _ = sample_rows(db, "r", GRADER, SampleFilter())
    assert {row.question_id: row.outcome for row in rows} == expected
    assert expected["q-07"] == "judged" and expected["q-08"] == "ungraded"


@pytest.mark.parametrize(
    ("query", "ids"),
    [
        ({}, [s.question_id for s in SAMPLES]),
        ({"outcome": "correct"}, ["q-01", "q-10", "q-11"]),
        ({"outcome": "wrong"}, ["q-02", "q-09"]),
        ({"outcome": "unparsed"}, ["q-03"]),
        ({"outcome": "ambiguous"}, ["q-04"]),
        ({"outcome": "error"}, ["q-05"]),
        ({"outcome": "judged"}, ["q-07"]),
        ({"outcome": "ungraded"}, ["q-06", "q-08"]),
        ({"outcome": "truncated"}, ["q-09"]),
        ({"type": "open"}, ["q-06", "q-07", "q-08"]),
        ({"type": "single", "outcome": "wrong"}, ["q-02"]),
        ({"domain": "(none)"}, ["q-06", "q-07", "q-08"]),
        ({"domain": "d", "outcome": "correct"}, ["q-01", "q-10", "q-11"]),
        ({"subject": "法律"}, ["q-10"]),
        ({"category": "STEM"}, ["q-11"]),
        ({"q": "q-0"}, [f"q-0{i}" for i in range(1, 10)]),  # the id
        ({"q": "<script>"}, ["q-11"]),  # the question's stem
        ({"q": "100%"}, ["q-03"]),  # % is itself, not a wildcard (q-04 says 100x)
        ({"q": "A_c"}, ["q-09"]),  # and so is _
        ({"q": "a_CUT"}, ["q-09"]),  # ASCII case does not matter
        ({"q": "nowhere"}, []),
        ({"q": "\x00"}, []),  # a NUL is itself: no sample holds one (LIKE would read the pattern as `%`)
    ],
)
def test_each_filter(store: Path, query: dict[str, str], ids: list[str]) -> None:
    assert shown(store, SampleFilter.from_query(query)) == ids


def test_choice_counts_are_the_filtered_counts(store: Path) -> None:
    with reading(store) as db:
        cells = sample_cells(db, "r", GRADER)
    chosen = SampleFilter.from_query({"type": "single"})
    assert matching(cells, chosen) == len(shown(store, chosen)) == 2
    outcomes = choice_counts(cells, chosen, "outcome")
    assert outcomes == {"correct": 1, "wrong": 1}
    assert choice_counts(cells, chosen, "type") == {"single": 2, "multi": 5, "open": 3, "judge": 1}
    for value, count in choice_counts(cells, SampleFilter(), "outcome").items():
        assert count == len(shown(store, SampleFilter(outcome=value)))


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"outcome": "nonsense"}, "unknown outcome"),
        ({"page": "two"}, "page must be a whole number"),
        ({"page": "0"}, "page must be a whole number"),
        ({"page": "-3"}, "page must be a whole number"),
        ({"page": "9223372036854775807"}, "page must be a whole number"),  # its offset overflows SQLite's
        ({"page": "9" * 5000}, "page must be a whole number"),
        ({"subject": "x" * 1001}, "at most 1000 characters"),
    ],
)
def test_a_bad_query_is_refused(query: dict[str, str], message: str) -> None:
    with pytest.raises(InputError, match=message):
        SampleFilter.from_query(query)


def test_like_pattern_escapes_its_wildcards() -> None:
    assert like_pattern(r"50%_a\b") == r"%50\%\_a\\b%"


def test_pages_follow_the_primary_key(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with Store(path) as opened:
        opened.open_run("r", SPEC)
        for i in range(2 * PAGE_SIZE + 20):
            opened.add_sample("r", sample(f"id{i:04d}", position=i))
    with reading(path) as db:
        pages = [sample_rows(db, "r", None, SampleFilter(page=p)) for p in (1, 2, 3, 4)]
    assert [len(rows) for rows, _ in pages] == [PAGE_SIZE, PAGE_SIZE, 20, 0]
    assert [more for _, more in pages] == [True, True, False, False]
    assert [r.question_id for r in pages[2][0]] == [
        f"id{i:04d}" for i in range(2 * PAGE_SIZE, 2 * PAGE_SIZE + 20)
    ]


@pytest.mark.parametrize(
    "query",
    [{}, {"outcome": "wrong", "page": "50"}, {"q": "答案"}, {"subject": "x", "outcome": "truncated"}],
)
def test_a_page_walks_the_primary_key_without_sorting(store: Path, query: dict[str, str]) -> None:
    """Fast on a run of 200,000 samples with no index added: the run's rows in key order, LIMIT stops."""
    with reading(store) as db:
        sql, values = page_query(db, "r", GRADER, SampleFilter.from_query(query))
        plan = [str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", values)]
    assert any("sqlite_autoindex_samples_1 (run=?)" in step for step in plan), plan
    assert not any("TEMP B-TREE" in step or step.startswith("SCAN") for step in plan), plan


def test_a_poll_reads_only_the_rows_written_since_the_last(store: Path) -> None:
    with reading(store) as db:
        plan = [str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {NEW_COUNTS_SQL}", (5, "r"))]
    assert plan == ["SEARCH samples USING INTEGER PRIMARY KEY (rowid>?)"]


def poll(tallies: LiveTallies, store: Path) -> LiveRun:
    state = store_state(store)  # before the store is read, as the viewer reads it
    with Store(store, read_only=True) as opened, reading(store) as db:
        return tallies.read(db, opened.runs(), state)[0]


def test_live_counts_are_the_runs_list(store: Path) -> None:
    live = poll(LiveTallies(), store)
    info = runs(store=store)[0]
    assert live.accuracy == info.accuracy
    assert live.coverage.short == info.coverage.short
    overall = load_run("r", store=store).summarize().overall  # the judge's points folded in
    assert (live.counts.points, live.counts.max_points) == (overall.points, overall.max_points)


def test_live_counts_follow_new_and_replaced_answers(store: Path) -> None:
    tallies = LiveTallies()

    def polled() -> tuple[float | None, int, int]:
        live = poll(tallies, store)
        return live.accuracy, live.counts.stored, live.counts.errors

    first = polled()
    with Store(store) as opened:
        opened.add_sample("r", sample("q-12", correct=False, score=0.0))  # a new answer
    assert polled() == (runs(store=store)[0].accuracy, first[1] + 1, 1)
    with Store(store) as opened:
        opened.add_sample("r", sample("q-05"))  # the error, asked again: now right
    assert polled() == (runs(store=store)[0].accuracy, first[1] + 1, 0)


def test_every_run_counted_in_one_pass_is_counted_as_alone(tmp_path: Path) -> None:
    """The runs page's first poll counts every run in one pass: each run's numbers and signature are those
    its own count gives, on runs with every status, open answers, scores and grades."""
    from tests.support.mixed_runs import three_runs

    path = tmp_path / "s.sqlite"
    three_runs(path, errors=("q/8",))
    with reading(path) as db:
        counted = live_module.counted_runs(db)
        assert sorted(counted) == ["mixed", "other", "third"]
        for run, (signature, counts) in counted.items():
            assert (signature, counts) == (run_signature(db, run), live_module.count_rows(db, run))
            assert counts.errors and counts.scored and counts.points


def test_a_poll_while_a_run_writes_counts_only_its_new_answers(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer keeps the store open, so its answers stay in the -wal (no checkpoint rewrites the file):
    the first poll counts every run in one pass; each later poll counts the rows written since the last;
    an UPDATE in place, which adds none, is counted anew, in one pass again."""
    counted: list[int] = []
    passes: list[int] = []
    count_rows, counted_runs = live_module.count_rows, live_module.counted_runs

    def recorded(db: sqlite3.Connection, run: str, after_rowid: int = 0) -> Counts:
        counted.append(after_rowid)
        return count_rows(db, run, after_rowid)

    def recorded_pass(db: sqlite3.Connection) -> dict[str, tuple[Signature, Counts]]:
        passes.append(1)
        return counted_runs(db)

    alone = counted_alone(store)
    monkeypatch.setattr(live_module, "count_rows", recorded)
    monkeypatch.setattr(live_module, "counted_runs", recorded_pass)
    tallies = LiveTallies()
    with Store(store) as writer:
        first = poll(tallies, store)
        assert counted == [] and len(passes) == 1
        assert first == alone  # one pass counts as a count of the run alone
        assert poll(tallies, store) == first and counted == [] and len(passes) == 1  # nothing read
        writer.add_sample("r", sample("q-12", correct=False, score=0.0))
        assert poll(tallies, store).counts.stored == first.counts.stored + 1
        assert len(counted) == 1 and counted[0] > 0  # only the rows after the largest rowid seen
        editor = sqlite3.connect(store, isolation_level=None)
        editor.execute("UPDATE samples SET correct = 1, status = 'ok', score = 2 WHERE question_id = 'q-02'")
        editor.close()
        assert poll(tallies, store).accuracy == runs(store=store)[0].accuracy
        assert len(counted) == 1 and len(passes) == 2  # counted again, whole


def counted_alone(store: Path) -> LiveRun:
    """The run's numbers as its own page counts them (its samples' aggregate, over the run alone)."""
    state = store_state(store)
    with Store(store, read_only=True) as opened, reading(store) as db:
        return LiveTallies().one(db, opened.runs()[0], state)


@pytest.mark.parametrize(
    "name", ["plain", "a/b", "a?b#c", "50%", "%2F", "..", "考试 运行", '"><svg onload=alert(1)>', "/lead/"]
)
def test_links_carry_any_run_name(name: str) -> None:
    url = run_url(name, "sample", "law/0?x")
    assert url.count("/") == 4 and "?" not in url and "#" not in url
    assert split_run_path(url) == [name, "sample", "law/0?x"]
    assert "&" in compare_url([name, "b"]) and "#" not in compare_url([name, "b"])


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_only_this_machine_without_allow_remote(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    if loopback:
        assert check_host(host, allow_remote=False) is None
        return
    with pytest.raises(InputError, match="--allow-remote"):
        check_host(host, allow_remote=False)
    warning = check_host(host, allow_remote=True)
    assert warning is not None and warning.startswith("warning:") and host in warning
