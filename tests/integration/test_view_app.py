"""The viewer's pages and endpoint through Starlette's TestClient (no browser): what each page shows, that
the store is never written, the 404s and 400s, the security headers, and serving on this machine only."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from kaoshi.cli.main import main
from kaoshi.errors import InputError
from kaoshi.store import Store, StoreError
from kaoshi.view import create_app, start
from kaoshi.view.urls import run_url
from tests.support import interruptions
from tests.support.runs import SAMPLE_OPEN, judge_script
from tests.support.stores import SPEC, digest, sample

testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
HOSTILE = '"><svg onload=alert(1)>/a?b#c%20'
LOCAL = "http://127.0.0.1:8000"


@pytest.fixture
def store(capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path) -> Path:
    """'strong' and 'weak' on the sample exam, weak's open answers judged; and a run with a hostile name."""
    judge = judge_script(tmp_path / "judge.jsonl", dict.fromkeys(SAMPLE_OPEN, 6))
    assert main(["judge", "weak", "--judge", f"mock:{judge}", "--store", str(two_runs)]) == 0
    with Store(two_runs) as opened:
        opened.open_run(HOSTILE, SPEC)
        opened.add_sample(HOSTILE, sample("law/0", response="<script>window.__pwned=1</script>答案：AB"))
        opened.finish_run(HOSTILE)
    capsys.readouterr()
    return two_runs


@pytest.fixture
def client(store: Path) -> Iterator[Any]:
    with testclient.TestClient(create_app(store), base_url=LOCAL) as opened:
        yield opened


def text_of(page: str) -> str:
    """The page's text as a reader sees it (tags dropped, entities read, spaces squeezed)."""
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


class Elements(HTMLParser):
    """Every tag, attribute name and script element of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.scripts: list[list[tuple[str, str | None]]] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)
        if tag == "script":
            self.scripts.append(attrs)
        if tag == "img":
            self.images.append(dict(attrs).get("src") or "")


def test_the_runs_page_and_its_endpoint(client: Any) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert 'data-run="weak"' in page.text and "44/44" in page.text
    rows = {row["run"]: row for row in client.get("/api/runs").json()["runs"]}
    assert list(rows) == ["strong", "weak", HOSTILE]
    weak = rows["weak"]
    assert (weak["accuracy_text"], weak["done"], weak["status"], weak["errors"]) == (
        "25.0%",
        "44/44",
        "finished",
        0,
    )
    assert weak["points"] == "24/68" and weak["grader"].startswith("careful:")  # 12 objective + 4 × 3 judged
    assert rows[HOSTILE]["href"] == run_url(HOSTILE)


def test_a_run_page_has_its_spec_summary_and_plot(client: Any) -> None:
    page = client.get("/run/weak")
    assert page.status_code == 200
    shown = text_of(page.text)
    for expected in (
        "weak — overall",
        "weak — by domain",
        "weak — points by subject",
        "lhmke v1",
        "careful:",
    ):
        assert expected in shown
    assert '"fingerprint": "' in shown  # the whole spec
    pytest.importorskip("matplotlib")
    plot = client.get("/run/weak/plot.png")
    assert plot.status_code == 200 and plot.content.startswith(b"\x89PNG")


def test_a_run_page_draws_its_plot_only_when_the_browser_asks_for_it(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page links the figure and captions it without drawing it (drawing, with matplotlib's import,
    took most of a big run's page); the figure is drawn once, and its caption (plot.json, which the
    page's script puts in place) says what was noted while drawing it."""
    import warnings

    from kaoshi.view import pages

    drawn: list[Any] = []
    real = pages.draw

    def noted(*args: Any, **kwargs: Any) -> Any:
        warnings.warn("labels drawn in ASCII: domain 1 = 建筑工程", stacklevel=1)
        drawn.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(pages, "draw", noted)
    page = client.get("/run/weak")
    assert page.status_code == 200 and not drawn
    assert '<figure id="plot" data-caption="/run/weak/plot.json"><img alt="accuracy by domain"' in page.text
    assert "<figcaption>accuracy by domain</figcaption>" in page.text
    pytest.importorskip("matplotlib")
    for _ in range(2):
        plot = client.get("/run/weak/plot.png")
        assert plot.status_code == 200 and plot.content.startswith(b"\x89PNG")
    caption = client.get("/run/weak/plot.json").json()["caption"]
    assert caption == "accuracy by domain (labels drawn in ASCII: domain 1 = 建筑工程)"
    assert len(drawn) == 1  # kept while the store is unchanged


def test_a_run_page_without_matplotlib_says_why_there_is_no_plot(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else found(name, *a)
    )
    page = client.get("/run/weak")
    assert page.status_code == 200 and "plot.png" not in page.text
    assert "no plot: plots need matplotlib: pip install 'kaoshi[plot]'" in html.unescape(page.text)
    assert client.get("/run/weak/plot.png").status_code == 404


def test_the_samples_page_filters_and_counts(client: Any) -> None:
    page = client.get("/run/weak/samples", params={"outcome": "wrong", "domain": "建筑工程"})
    assert page.status_code == 200
    assert len(re.findall(r'class="sample-link"', page.text)) == 10  # 11 questions: 10 wrong, 1 open
    assert "10 sample(s) · page 1 of 1" in text_of(page.text)
    assert re.search(r'<option value="judged">judged \(1\)</option>', page.text)  # within the domain
    judged = client.get("/run/weak/samples", params={"outcome": "judged"})
    assert len(re.findall(r'class="sample-link"', judged.text)) == 4


def test_a_sample_page_shows_prompt_response_extraction_gold_and_judge(client: Any) -> None:
    page = client.get("/run/weak/sample/s-safe-10")
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "judged" in shown and "参考回答" in shown and "答案1得分：10" in shown  # the judge's reply
    assert "counts in the report" in shown and "3 of 5" in shown
    objective = text_of(client.get("/run/weak/sample/s-it-1").text)
    assert "rules" in objective and "gold answer A" in objective and "extracted answer B" in objective


def test_compare_and_leaderboard(client: Any, store: Path) -> None:
    page = client.get("/compare", params=[("run", "strong"), ("run", "weak")])
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "difference in accuracy vs strong" in shown and "compared on 40 questions" in shown
    assert len(re.findall(r'<tr data-id="', page.text)) == 34  # 30 objective, 4 open (judged vs not)
    # each difference shows the question's stem and each run's reply, read for the page that shows them
    with Store(store, read_only=True) as opened:
        strong, weak = ({s.question_id: s for s in opened.samples(name)} for name in ("strong", "weak"))
    shown_ids = re.findall(r'<tr data-id="([^"]+)"', page.text)
    for qid in shown_ids:
        assert html.escape(str(strong[qid].question["stem"])[:160], quote=False) in page.text
        for reply in (strong[qid].response, weak[qid].response):
            assert reply and html.escape(reply, quote=False) in page.text, qid
    chooser = client.get("/compare")
    assert chooser.status_code == 200 and "tick two or more runs" in chooser.text
    board = client.get("/leaderboard")
    assert board.status_code == 200 and "leaderboard — sample" in text_of(board.text)


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/run/nope", 404),
        ("/run/weak/sample/nope", 404),
        ("/run/weak/elsewhere", 404),
        ("/run/nope/samples", 404),
        ("/run/weak/samples?outcome=nonsense", 400),
        ("/run/weak/samples?page=x", 400),
        ("/compare?run=weak&run=nope", 404),
        ("/run/%FF", 400),
    ],
)
def test_what_the_store_lacks_is_a_page_not_a_crash(client: Any, url: str, status: int) -> None:
    response = client.get(url)
    assert response.status_code == status
    assert "content-security-policy" in response.headers


def test_hostile_names_and_output_are_text(client: Any) -> None:
    for url in ("/", run_url(HOSTILE), run_url(HOSTILE, "samples"), run_url(HOSTILE, "sample", "law/0")):
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.text
        assert "<svg" not in body and "<script>window" not in body
        assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body or url != run_url(
            HOSTILE, "sample", "law/0"
        )
        assert HOSTILE.replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;") in body
        # the page's elements as a browser parses them: only our own script, no handler or style attribute
        elements = Elements()
        elements.feed(body)
        assert elements.scripts == [[("src", "/static/view.js"), ("defer", None)]]
        assert elements.tags.isdisjoint({"svg", "iframe", "object", "embed"})
        assert all(src.endswith("/plot.png") for src in elements.images)  # the run's own plot only
        assert not [name for name in elements.attributes if name.startswith("on") or name == "style"]
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_the_store_is_never_written(store: Path, tmp_path: Path) -> None:
    with Store(store):
        pass  # a writer's close checkpoints the -wal: every row is in the file
    before = (digest(store), store.stat().st_mtime_ns)
    with testclient.TestClient(create_app(store), base_url=LOCAL) as client:
        for url in ("/", "/api/runs", "/run/weak", "/run/weak/samples?outcome=wrong&q=答案", "/leaderboard"):
            assert client.get(url).status_code == 200
        assert client.get("/run/weak/sample/s-it-1").status_code == 200
        assert client.get("/compare?run=strong&run=weak").status_code == 200
    assert (digest(store), store.stat().st_mtime_ns) == before
    # SQLite's readers of a WAL store make its -shm (and an empty -wal), as `kaoshi report` does; no page
    # was written to the -wal
    wal = Path(f"{store}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    missing = tmp_path / "elsewhere" / "none.sqlite"
    with pytest.raises(StoreError, match="no store at"):
        create_app(missing)
    assert not missing.parent.exists()
    assert main(["view", "--store", str(missing), "--port", "0"]) == 2
    assert not missing.parent.exists()


def test_only_requests_addressed_to_this_machine(store: Path) -> None:
    with testclient.TestClient(create_app(store), base_url="http://attacker.example") as client:
        assert client.get("/api/runs").status_code == 421
    for base in (LOCAL, "http://localhost:8000", "http://[::1]:8000"):
        with testclient.TestClient(create_app(store), base_url=base) as client:
            assert client.get("/api/runs").status_code == 200
    with testclient.TestClient(create_app(store, host="0.0.0.0"), base_url="http://lab-box:8000") as client:
        assert client.get("/api/runs").status_code == 200  # --allow-remote: any name


def test_a_remote_host_needs_allow_remote(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", "--store", str(store), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "--allow-remote" in err and "this machine only" in err
    said: list[str] = []
    with start(store, host="0.0.0.0", allow_remote=True, announce=said.append) as viewer:
        port = viewer.url.rsplit(":", 1)[1].strip("/")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/runs", timeout=10) as answer:
            assert json.load(answer)["runs"][0]["run"] == "strong"
    assert said[0].startswith("warning: serving on 0.0.0.0") and said[1].startswith("kaoshi view: http://")


def test_the_viewer_serves_in_a_thread_on_a_free_port(store: Path) -> None:
    with start(store, announce=lambda _: None) as viewer:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", viewer.url)
        with urllib.request.urlopen(viewer.url + "static/view.js", timeout=10) as answer:
            assert answer.headers["content-type"].startswith(("text/javascript", "application/javascript"))
            assert b"textContent" in answer.read()


def test_a_missing_extra_is_one_line(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    with pytest.raises(InputError, match=r"needs uvicorn: pip install 'kaoshi\[view\]'"):
        create_app(store)


def test_importing_kaoshi_and_the_viewer_imports_no_web_server() -> None:
    code = "import sys, kaoshi, kaoshi.view; kaoshi.view.serve; print(sorted(sys.modules))"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    loaded = done.stdout
    assert "starlette" not in loaded and "uvicorn" not in loaded


@pytest.mark.slow
def test_kaoshi_view_serves_until_interrupted(store: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "kaoshi.cli.main", "view", "--store", str(store), "--port", "0"],
        env=interruptions.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url and "read-only" in line, line
        with urllib.request.urlopen(url.group(0) + "api/runs", timeout=10) as answer:
            assert [row["run"] for row in json.load(answer)["runs"]] == ["strong", "weak", HOSTILE]
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
