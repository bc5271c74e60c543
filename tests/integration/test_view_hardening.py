"""The viewer against a hostile store and hostile requests (issue 40): a store replaced, overwritten or edited
in place shows its own numbers, never ones kept from before; a bad query parameter is a 400, never a 500; a
search for a NUL finds only what holds one; only Host headers naming this machine pass; and the JSON
endpoint answers JSON even when the store cannot be read."""

from __future__ import annotations

import html
import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import kaoshi.view.pages as pages
from kaoshi.store import SampleRecord, Store
from kaoshi.view import create_app
from tests.support.stores import SPEC, sample

testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
LOCAL = "http://127.0.0.1:8000"
QUESTIONS = 20
# Every page and the endpoint that show a number kept between requests.
SHOWN = (
    "/",
    "/api/runs",
    "/run/a",
    "/run/a/samples",
    "/run/a/samples?outcome=correct",
    "/run/a/samples?outcome=wrong",
    "/run/b",
    "/leaderboard",
    "/compare?run=a&run=b",
)


def answered(question_id: str, right: bool, response: str = "答案：A") -> SampleRecord:
    return sample(
        question_id,
        qtype="single",
        gold=frozenset("A"),
        answer=frozenset("A" if right else "B"),
        correct=right,
        score=1.0 if right else 0.0,
        points=1.0,
        response=response,
    )


def write_store(path: Path, model: str, right: dict[str, int]) -> Path:
    """Runs 'a' and 'b' of QUESTIONS answers each, the first `right[run]` of them right: two stores written
    by this hold the same run names, counts and rowids, whatever they answer."""
    with Store(path) as store:
        for run in ("a", "b"):
            store.open_run(run, replace(SPEC, model=model))
            for i in range(QUESTIONS):
                store.add_sample(run, answered(f"q{i:02d}", i < right[run]))
            store.finish_run(run)
    return path


def fresh(path: Path, url: str) -> tuple[int, str]:
    """What a viewer that has kept nothing shows: the store's own numbers."""
    with testclient.TestClient(create_app(path), base_url=LOCAL) as client:
        response = client.get(url)
    return response.status_code, response.text


def replaced(path: Path, other: Path) -> Iterator[None]:
    os.replace(other, path)  # a new file (a new inode) under the same name
    yield


def overwritten(path: Path, other: Path) -> Iterator[None]:
    shutil.copyfile(other, path)  # the other store's bytes written over this file (the same inode)
    yield


def _update_in_place(db: sqlite3.Connection) -> None:
    # fewer right answers, without a row added or removed: the same counts and the same rowids
    db.execute("UPDATE samples SET correct = 0, score = 0 WHERE run = 'a' AND question_id >= 'q03'")
    db.execute("UPDATE samples SET correct = 1, score = 1 WHERE run = 'b'")


def updated_and_checkpointed(path: Path, other: Path) -> Iterator[None]:
    db = sqlite3.connect(path, isolation_level=None)
    _update_in_place(db)
    db.close()  # the last connection: the rows are copied into the file, the -wal removed
    yield


def updated_in_the_log(path: Path, other: Path) -> Iterator[None]:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        _update_in_place(db)  # committed to the -wal; the file itself is unchanged while the writer is open
        yield
    finally:
        db.close()


@pytest.mark.parametrize(
    "change", [replaced, overwritten, updated_and_checkpointed, updated_in_the_log], ids=lambda f: f.__name__
)
def test_a_changed_store_shows_its_own_numbers(
    tmp_path: Path, change: Callable[[Path, Path], Iterator[None]]
) -> None:
    path = write_store(tmp_path / "store.sqlite", "old-model", {"a": 8, "b": 4})
    other = write_store(tmp_path / "other.sqlite", "new-model", {"a": 3, "b": 12})
    with testclient.TestClient(create_app(path), base_url=LOCAL) as client:
        before = {url: client.get(url).text for url in SHOWN}
        for url in SHOWN:
            assert client.get(url).text == before[url], url  # kept: the same page again
        steps = change(path, other)
        next(steps)
        try:
            after = {url: client.get(url) for url in SHOWN}
            stale = [url for url, got in after.items() if (got.status_code, got.text) != fresh(path, url)]
            assert stale == []
            assert [url for url, got in after.items() if got.text == before[url]] == []  # each one changed
        finally:
            next(steps, None)


def test_a_page_is_computed_once_while_the_store_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keying the kept results on the store's state still keeps them: reading the store (which makes its
    -shm and an empty -wal) is no change."""
    path = write_store(tmp_path / "store.sqlite", "m", {"a": 8, "b": 4})
    computed: list[str] = []
    run_view = pages._run_view

    def counted(at: Path, name: str, *more: Any) -> Any:
        computed.append(name)
        return run_view(at, name, *more)

    monkeypatch.setattr(pages, "_run_view", counted)
    with testclient.TestClient(create_app(path), base_url=LOCAL) as client:
        for _ in range(3):
            assert client.get("/run/a").status_code == 200
            assert client.get("/run/a/plot.png").status_code in (200, 404)  # 404 without matplotlib
        assert computed == ["a"]
        with Store(path) as store:
            store.add_sample("a", answered("q99", True))  # a live run's new answer: shown at once
        assert "q99" in client.get("/run/a/samples?outcome=correct").text
        client.get("/run/a")
        assert computed == ["a", "a"]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    path = write_store(tmp_path / "store.sqlite", "m", {"a": 8, "b": 4})
    with Store(path) as store:
        store.open_run("nul", SPEC)
        store.add_sample("nul", answered("plain-1", True, "答案：A"))
        store.add_sample("nul", answered("with-nul", True, "答案：A\x00然后"))
        store.add_sample("nul", answered("plain-2", False, "A\x01B"))
        store.finish_run("nul")
    with testclient.TestClient(create_app(path), base_url=LOCAL) as opened:
        yield opened


def error_message(page: str) -> str:
    found = re.search(r'<p class="error">(.*?)</p>', page, re.S)
    assert found, page
    return html.unescape(found.group(1))


HUGE = "9" * 5000  # past Python's 4,300-digit limit on int()


@pytest.mark.parametrize(
    "url",
    [
        "/run/a/samples?page=9223372036854775807",  # the offset overflows SQLite's 64-bit integer
        "/run/a/samples?page=184467440737095516150",
        f"/run/a/samples?page={HUGE}",
        "/run/a/samples?page=-1",
        "/run/a/samples?page=0",
        "/run/a/samples?page=1e3",
        "/run/a/samples?page=%00",
        "/run/a/samples?page=%D9%A1",  # an Arabic-Indic 1: a digit to Python, not a page number
        f"/run/a/samples?outcome={'x' * 5000}",
        f"/run/a/samples?type={HUGE}",
        f"/run/a/samples?subject={'科' * 5000}",
        "/compare?run=a&run=b&page=9223372036854775807",
        f"/compare?run=a&run=b&page={HUGE}",
        "/compare?run=a&run=b&page=-2",
        "/compare?run=a&run=b&page=x",
    ],
)
def test_a_bad_query_parameter_is_a_400_with_one_line(client: Any, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 400, response.text[-500:]
    message = error_message(response.text)
    assert "\n" not in message and len(message) < 300, message


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("/run/a/samples?page=1", 20),
        ("/run/a/samples?page=2", 0),  # past the last page: empty, not an error
        ("/run/a/samples?page=184467440737095516", 0),  # the last page whose offset SQLite can hold
        ("/compare?run=a&run=b&page=999", None),  # a comparison shows its last page
    ],
)
def test_a_good_page_number_is_shown(client: Any, url: str, shown: int | None) -> None:
    response = client.get(url)
    assert response.status_code == 200
    if shown is not None:
        assert response.text.count('class="sample-link"') == shown


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("\x00", ["with-nul"]),  # not every sample: a NUL in a LIKE pattern ends it, leaving `%`
        ("a\x00然", ["with-nul"]),  # ASCII case still does not matter
        ("\x00然后", ["with-nul"]),
        ("\x00x", []),
        ("\x01", ["plain-2"]),
        ("答案", ["plain-1", "with-nul"]),
    ],
)
def test_a_search_for_a_nul_finds_only_what_holds_one(client: Any, text: str, ids: list[str]) -> None:
    response = client.get("/run/nul/samples", params={"q": text})
    assert response.status_code == 200
    assert re.findall(r'class="sample-link"[^>]*>([^<]+)<', response.text) == ids


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:8000", 200),
        ("127.0.0.1", 200),
        ("localhost:8000", 200),
        ("LOCALHOST", 200),
        ("[::1]:8000", 200),
        ("[::1]", 200),
        ("127.0.0.1:8000@evil.com", 421),
        ("127.0.0.1@evil.com", 421),
        ("evil.com", 421),
        ("evil.com:8000", 421),
        ("127.0.0.1.evil.com", 421),
        ("evil.com:127.0.0.1", 421),
        ("127.0.0.1:abc", 421),
        ("127.0.0.1:", 421),
        ("127.0.0.1:8000:8000", 421),
        ("127.0.0.1:99999", 421),
        ("[::1]evil.com", 421),
        ("[::1]:8000@evil.com", 421),
        ("localhost/evil", 421),
        ("", 421),
    ],
)
def test_only_a_host_naming_this_machine_passes(client: Any, host: str, status: int) -> None:
    assert client.get("/api/runs", headers={"host": host}).status_code == status


def test_two_host_headers_are_refused(tmp_path: Path) -> None:
    import asyncio

    app = create_app(write_store(tmp_path / "store.sqlite", "m", {"a": 1, "b": 1}))
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/runs",
        "raw_path": b"/api/runs",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), (b"host", b"evil.com")],
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 421


def _not_sqlite(path: Path) -> None:
    path.write_text("not a database, just text\n" * 200, encoding="utf-8")


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _a_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize("damage", [_not_sqlite, _truncated, _a_folder], ids=lambda f: f.__name__.strip("_"))
def test_the_endpoint_answers_json_when_the_store_cannot_be_read(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    path = write_store(tmp_path / "store.sqlite", "m", {"a": 8, "b": 4})
    with testclient.TestClient(create_app(path), base_url=LOCAL) as client:
        assert client.get("/api/runs").status_code == 200
        damage(path)
        answer = client.get("/api/runs")
        assert answer.status_code == 503
        assert answer.headers["content-type"] == "application/json"
        message = answer.json()["error"]
        assert str(path) in message and "\n" not in message
        page = client.get("/")
        assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize(
    ("method", "url", "status"),
    [("GET", "/api/nothing", 404), ("GET", "/api/runs/x", 404), ("POST", "/api/runs", 405)],
)
def test_every_api_answer_is_json(client: Any, method: str, url: str, status: int) -> None:
    answer = client.request(method, url)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"]
    assert "content-security-policy" in answer.headers
    refused = client.get("/api/runs", headers={"host": "evil.com"})
    assert refused.status_code == 421 and refused.json()["error"]
