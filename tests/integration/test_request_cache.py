"""The cache across runs (issue 43): a request already answered is answered from the store instead of paid
for again; on by default for a provider's greedy requests, never for an error, across stores with
--cache-from, and left out of the run's cost."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("aiohttp")

from kaoshi.api.costs import run_usage
from kaoshi.store import Store
from tests.support.fake_openai import FakeOpenAI
from tests.support.paid import LETTERS, kaoshi, paid_exam

FIRST = "paid-openai_m-generate"


def exam_file(path: Path, n: int = 12) -> Path:
    return paid_exam(path, n)


def indexes_of_requests(store: Path) -> set[str]:
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE '%requests'")
        return {row[0] for row in rows}


def answers(store: Path, run: str) -> dict[str, tuple[str | None, str | None]]:
    with Store(store, read_only=True) as opened:
        return {s.question_id: (s.response, s.answered_from) for s in opened.all_samples(run)}


def test_a_repeated_run_is_answered_from_the_cache_with_no_request_and_no_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    store = tmp_path / "s.sqlite"
    replies = {f"第{i}题": f"答案：{LETTERS[(i * 3) % 4]}" for i in range(12)}
    with FakeOpenAI(answers=replies) as server:
        # a server on this machine: the cache is asked for (a provider's endpoints have it by default)
        run = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
               "--store", str(store), "--no-report", "--cache")  # fmt: skip
        assert kaoshi(capsys, *run)[0] == 0
        assert len(server.bodies) == 12
        code, _, err = kaoshi(capsys, *run, "--run-name", "again")
        assert code == 0 and "12 from the cache (answered before, not paid again)" in err, err
        assert len(server.bodies) == 12  # no request
        # --no-cache: asked again
        assert kaoshi(capsys, *run, "--run-name", "fresh", "--no-cache")[0] == 0
        assert len(server.bodies) == 24
        # another budget is another request
        assert kaoshi(capsys, *run, "--run-name", "longer", "--max-new-tokens", "64")[0] == 0
        assert len(server.bodies) == 36
    first, again = answers(store, FIRST), answers(store, "again")
    assert {q: text for q, (text, _) in again.items()} == {q: text for q, (text, _) in first.items()}
    assert {source for _, source in again.values()} == {f"run {FIRST}"}
    assert {source for _, source in answers(store, "fresh").values()} == {None}
    code, out, _ = kaoshi(capsys, "report", FIRST, "again", "--format", "json", "--price", "1,1",
                          "--store", str(store))  # fmt: skip
    document = json.loads(out)
    assert document["runs"][0]["accuracy"] == document["runs"][1]["accuracy"] is not None
    usage = document["usage"]
    assert usage["again"]["cost"] == 0 and usage["again"]["answers_taken_from_other_runs"] == 12
    assert usage[FIRST]["cost"] > 0 and usage[FIRST]["answers_taken_from_other_runs"] == 0
    assert run_usage("again", store=store).taken == 12


def test_errors_are_never_answered_from_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    store = tmp_path / "s.sqlite"
    with FakeOpenAI(faults={"第3题": ["400"], "第7题": ["400"]}) as server:
        run = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
               "--store", str(store), "--no-report", "--max-retries", "0", "--cache")  # fmt: skip
        assert kaoshi(capsys, *run)[0] == 0
        code, _, err = kaoshi(capsys, *run, "--run-name", "again")
        assert code == 0 and "10 from the cache" in err, err
    again = answers(store, "again")
    assert again["q3"][1] is None and again["q7"][1] is None  # asked again, answered this time
    assert sum(source is not None for _, source in again.values()) == 10


def test_sampled_requests_come_from_the_cache_only_when_asked_and_for_the_same_seed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    store = tmp_path / "s.sqlite"
    with FakeOpenAI() as server:
        run = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
               "--store", str(store), "--no-report", "--temperature", "0.7", "--seed", "1",
               "--cache")  # fmt: skip
        assert kaoshi(capsys, *run, "--run-name", "s1")[0] == 0
        assert kaoshi(capsys, *run, "--run-name", "s2")[0] == 0  # a sampled answer is one draw
        assert len(server.bodies) == 24
        code, _, err = kaoshi(capsys, *run, "--run-name", "s3", "--cache-sampled")
        assert code == 0 and "12 from the cache" in err and len(server.bodies) == 24
        other_seed = [a if a != "1" else "2" for a in run]
        assert kaoshi(capsys, *other_seed, "--run-name", "s4", "--cache-sampled")[0] == 0
        assert len(server.bodies) == 36  # another seed is another request


def test_answers_come_from_another_store_named_with_cache_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exam = exam_file(tmp_path / "exam.jsonl")
    first, second = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    with FakeOpenAI() as server:
        run = ("run", "--data", str(exam), "--model", "openai:m", "--base-url", server.base_url,
               "--no-report", "--cache")  # fmt: skip
        assert kaoshi(capsys, *run, "--store", str(first), "--limit-total", "5")[0] == 0
        code, _, err = kaoshi(capsys, *run, "--store", str(second), "--cache-from", str(first))
        assert code == 0 and "5 from the cache" in err, err
        assert len(server.bodies) == 5 + 7
    taken = answers(second, FIRST)
    assert sum(source == f"{first}: run {FIRST}-total5" for _, source in taken.values()) == 5


def test_a_local_models_answers_are_asked_afresh_unless_the_cache_is_asked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A local model's weights may change under the same spec: its runs ask it again by default."""
    store = tmp_path / "s.sqlite"
    run = ("run", "--benchmark", "sample", "--model", "constant:A", "--store", str(store), "--no-report")
    assert kaoshi(capsys, *run)[0] == 0
    code, _, err = kaoshi(capsys, *run, "--run-name", "again")
    assert code == 0 and "from the cache" not in err
    # a store whose runs never used the cache has no index of requests to write (a twelfth of the rate)
    assert not indexes_of_requests(store)
    elsewhere = tmp_path / "other.sqlite"
    code, _, err = kaoshi(capsys, *run[:-3], "--store", str(elsewhere), "--no-report", "--cache",
                          "--cache-from", str(store))  # fmt: skip
    assert code == 0 and "44 from the cache" in err, err  # read from rows of a store without the index
    code, _, err = kaoshi(capsys, *run, "--run-name", "cached", "--cache")
    assert code == 0 and "from the cache" in err
    assert indexes_of_requests(store) == {"samples_requests", "repeat_samples_requests"}
    with sqlite3.connect(store) as db:
        keys = db.execute("SELECT COUNT(DISTINCT request_key) FROM samples WHERE run = 'again'").fetchone()[0]
        stored = db.execute("SELECT COUNT(*) FROM samples WHERE run = 'again'").fetchone()[0]
    assert keys == stored  # every generated answer keeps its request's key


@pytest.mark.parametrize(
    ("url", "cached"),
    [
        ("https://api.openai.com/v1", True),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", True),
        ("http://127.0.0.1:8000/v1", False),
        ("http://localhost:8000/v1", False),
        ("http://[::1]:8000/v1", False),
        ("http://10.0.3.7:8000/v1", False),
        ("http://192.168.1.20/v1", False),
        ("http://gpu-box:8000/v1", False),  # a name without a domain: a machine on this network
        ("http://vllm.internal:8000/v1", False),
    ],
)
def test_a_providers_answers_are_cached_by_default_and_a_servers_on_this_network_are_not(
    url: str, cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider's requests are paid for and its model names the model; a server someone runs (vLLM,
    llama.cpp) may serve a new checkpoint under the same name, so it is asked afresh unless --cache."""
    from kaoshi.models import ModelOptions, resolve_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = resolve_model("openai:m", ModelOptions(base_url=url))
    try:
        assert model.cached_by_default() is cached
    finally:
        model.close()
    both = resolve_model(
        "openai:m", ModelOptions(base_url=("https://api.openai.com/v1", "http://10.0.0.2/v1"))
    )
    assert not both.cached_by_default()
    both.close()


def test_an_estimate_leaves_out_what_the_cache_answers_and_a_vote_is_never_cached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--estimate` of a run the cache answers says it would send nothing; a vote of runs (its response
    is the ballots) is no answer a later run takes; a run with an LLM extractor does not take the answers
    of a run without one."""
    store = tmp_path / "s.sqlite"
    base = ("run", "--benchmark", "sample", "--store", str(store), "--no-report", "--cache")
    for letter in "ABC":
        assert kaoshi(capsys, *base, "--model", f"constant:{letter}", "--run-name", letter)[0] == 0
    code, out, _ = kaoshi(capsys, *base, "--model", "constant:A", "--run-name", "again", "--estimate")
    assert code == 0 and "would send 0 request(s)" in out and "44 answered already" in out
    assert kaoshi(capsys, "vote", "A", "B", "C", "--run-name", "v", "--store", str(store))[0] == 0
    code, _, err = kaoshi(capsys, *base, "--model", "constant:A", "--run-name", "after-vote")
    assert code == 0 and "44 from the cache" in err
    assert {source for _, source in answers(store, "after-vote").values()} == {"run A"}
    code, _, err = kaoshi(capsys, *base, "--model", "constant:A", "--run-name", "extracted",
                          "--llm-extractor", "constant:A")  # fmt: skip
    assert code == 0 and "from the cache" not in err, err  # another reading of the answers: asked


def test_a_cache_store_that_is_not_there_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s.sqlite"
    nowhere = str(tmp_path / "nowhere.sqlite")
    code, _, err = kaoshi(capsys, "run", "--benchmark", "sample", "--model", "constant:A",
                          "--store", str(store), "--cache-from", nowhere)  # fmt: skip
    assert code == 2 and "--cache-from" in err and "no such store" in err and not store.exists()
