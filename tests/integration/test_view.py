"""`kaoshi view` in a real headless Chromium: a run another process writes moves on the runs page without a
reload; a 20,000-sample run is filtered to its wrong answers and one is opened; a comparison lists exactly
the questions where two runs differ; hostile run names, questions and model output stay text."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.view import RunningView, start
from kaoshi.view.urls import compare_url, run_url
from tests.support import interruptions
from tests.support.browser import chromium
from tests.support.files import write_jsonl
from tests.support.runs import mock_script
from tests.support.view_stores import write_big_run

pytest.importorskip("starlette", reason="the view extra installs starlette")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A page that records console errors (a refused script or style is one) and page errors."""
    opened = browser.new_page()
    opened.problems = []
    opened.on(
        "console", lambda m: opened.problems.append(f"{m.type}: {m.text}") if m.type == "error" else None
    )
    opened.on("pageerror", lambda e: opened.problems.append(f"page error: {e}"))
    yield opened
    opened.close()


def viewer(store: Path) -> RunningView:
    return start(store, announce=lambda _: None)


def row_of(page: Any, run: str) -> Any:
    return page.locator("#run-rows tr").filter(has=page.locator("a[data-field=run]", has_text=run))


@pytest.mark.slow
def test_a_run_written_by_another_process_moves_without_a_reload(
    page: Any, two_runs: Path, tmp_path: Path
) -> None:
    questions = load_exam_result("sample").exam.questions
    script = mock_script(tmp_path / "slow.jsonl", {q.id for q in questions})
    rows = [{**json.loads(line), "delay": 0.12} for line in script.read_text(encoding="utf-8").splitlines()]
    write_jsonl(script, rows)  # 44 answers, 0.12 s each: about 5 s of writing
    with viewer(two_runs) as served:
        page.goto(served.url)
        page.evaluate("window.__loaded_once = true")  # gone if the page reloads
        run = ["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", "live"]
        process = subprocess.Popen(
            [sys.executable, "-m", "kaoshi.cli.main", *run, "--store", str(two_runs)],
            env=interruptions.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            live = row_of(page, "live")
            live.wait_for(timeout=30_000)  # the new run appears: added by the poll
            done = live.locator("[data-field=done]")
            first = done.text_content()
            assert first is not None and not first.startswith("44/44")
            page.wait_for_function(
                "([cell, before]) => cell.textContent !== before", arg=[done.element_handle(), first]
            )
            moved = done.text_content()
            assert moved != first
            assert live.locator("progress").evaluate("bar => bar.value") > 0
            _, stderr = process.communicate(timeout=60)
            assert process.returncode == 0, stderr
            page.wait_for_function("cell => cell.textContent === '44/44'", arg=done.element_handle())
            assert live.locator("[data-field=status]").text_content() == "finished"
            assert live.locator("[data-field=accuracy_text]").text_content() == "100.0%"
        finally:
            if process.poll() is None:
                process.kill()
        assert page.evaluate("window.__loaded_once") is True  # never reloaded
        assert page.problems == []


def test_the_wrong_answers_of_a_20000_sample_run(page: Any, tmp_path: Path) -> None:
    store = write_big_run(tmp_path / "big.sqlite", "big", 20_000)
    with sqlite3.connect(store) as db:
        wrong = db.execute("SELECT COUNT(*) FROM samples WHERE status = 'ok' AND correct = 0").fetchone()[0]
    with viewer(store) as served:
        page.goto(served.url.rstrip("/") + run_url("big", "samples"))
        assert page.locator("#count").text_content().strip().startswith("20000 sample(s) · page 1 of 400")
        with page.expect_navigation():
            page.select_option("select[name=outcome]", "wrong")  # the form is sent on change
        assert page.locator("#count").text_content().strip().startswith(f"{wrong} sample(s) · page 1 of")
        assert page.url.endswith(run_url("big", "samples", query=[("outcome", "wrong")]))
        outcomes = page.locator("#samples td.outcome").all_text_contents()
        assert len(outcomes) == 50 and all(o.startswith("wrong") for o in outcomes)
        with page.expect_navigation():
            page.locator("a[rel=next]").click()
        assert "page=2" in page.url and "outcome=wrong" in page.url
        first = page.locator("a.sample-link").first
        question_id = first.text_content()
        with page.expect_navigation():
            first.click()
        with sqlite3.connect(store) as db:
            prompt, response, answer, gold = db.execute(  # the prompt held once, in `texts` (schema 2)
                "SELECT t.body, response, answer, gold FROM samples s "
                "JOIN texts t ON t.position = s.position AND t.digest = s.prompt_ref "
                "WHERE run = 'big' AND question_id = ?",
                (question_id,),
            ).fetchone()
        assert page.locator("#prompt pre").text_content() == prompt  # exactly as sent
        assert page.locator("#response").text_content() == response
        assert page.locator("#answer").text_content() == json.loads(answer)[0]
        assert page.locator("#gold").text_content() == json.loads(gold)[0]
        assert page.locator("#extracted-by").text_content().startswith("rules")
        assert page.locator("#outcome").text_content().startswith("wrong")
    assert page.problems == []


def test_compare_lists_exactly_the_questions_where_the_runs_differ(page: Any, two_runs: Path) -> None:
    objective = [q.id for q in load_exam_result("sample").exam.questions if q.type.value != "open"]
    differing = set(objective[10:])  # strong is right on all 40, weak on the first 10 only
    with viewer(two_runs) as served:
        page.goto(served.url)
        page.locator("#run-rows input[value=strong]").check()
        page.locator("#run-rows input[value=weak]").check()
        with page.expect_navigation():
            page.get_by_role("button", name="compare the ticked runs").click()
        ids = page.locator("#differences tbody tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
        assert set(ids) == differing and len(ids) == 30
        assert page.locator("#differences-title").text_content() == "30 of 44 paired question(s) differ"
        first = page.locator("#differences tbody tr").first.locator("td.answer")
        assert first.nth(0).locator("a").text_content().endswith("correct")
        assert first.nth(1).locator("a").text_content().endswith("wrong")
        assert page.get_by_text("difference in accuracy vs strong").count() == 1
    assert page.problems == []


def test_a_run_pages_figure_is_captioned_as_it_was_drawn(
    page: Any, two_runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run page comes without drawing its figure; once the image has loaded, the page's script puts
    the drawn figure's caption (plot.json: with what was noted while drawing, here the font that draws no
    Chinese) in place."""
    matplotlib = pytest.importorskip("matplotlib")
    latin_only = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    monkeypatch.setenv("KAOSHI_CJK_FONT", str(latin_only))
    with viewer(two_runs) as served:
        page.goto(served.url.rstrip("/") + run_url("weak"))
        caption = page.evaluate(
            "async () => (await (await fetch(document.getElementById('plot').dataset.caption))"
            ".json()).caption"
        )
        assert (
            caption.startswith("accuracy by domain (KAOSHI_CJK_FONT=") and "does not draw Chinese" in caption
        )
        page.wait_for_function(
            "expected => document.querySelector('#plot figcaption').textContent === expected", arg=caption
        )
        assert page.locator("#plot img").get_attribute("alt") == caption
        assert page.locator("#plot img").evaluate("image => image.naturalWidth") > 0
    assert page.problems == []


HOSTILE_RUN = '<img src=x onerror="window.__pwned=1">/a?b#c%2F考'
HOSTILE_OUTPUT = {
    "h-1": "<script>window.__pwned = 2</script>答案：A",
    "h-2": '"><svg onload="window.__pwned = 3">答案：B',
    "h-3": '</pre><img src=x onerror="window.__pwned = 4">答案：A',
}
HOSTILE_STEM = '<script>window.__pwned = 5</script>下列"><svg onload=window.__pwned=6>哪项正确？'


def test_hostile_content_stays_text(page: Any, store_path: Path, tmp_path: Path) -> None:
    exam = write_jsonl(
        tmp_path / "exam.jsonl",
        [
            {"id": qid, "type": "single", "question": HOSTILE_STEM, "options": ["甲", "乙"], "answer": "A"}
            for qid in HOSTILE_OUTPUT
        ],
    )
    script = write_jsonl(
        tmp_path / "evil.jsonl", [{"id": k, "response": v} for k, v in HOSTILE_OUTPUT.items()]
    )
    run = ["run", "--data", str(exam), "--model", f"mock:{script}", "--store", str(store_path)]
    assert main([*run, "--run-name", "first"]) == 0
    with viewer(store_path) as served:
        page.goto(served.url)
        assert main([*run, "--run-name", HOSTILE_RUN]) == 0  # appears through the poll: built by the script
        row_of(page, HOSTILE_RUN).wait_for(timeout=10_000)
        assert row_of(page, HOSTILE_RUN).locator("[data-field=done]").text_content() == "3/3"
        with page.expect_navigation():
            row_of(page, HOSTILE_RUN).locator("a[data-field=run]").click()
        assert page.locator("h1").text_content() == HOSTILE_RUN
        pages = [
            run_url(HOSTILE_RUN, "samples", query=[("q", "<script>")]),
            *(run_url(HOSTILE_RUN, "sample", qid) for qid in HOSTILE_OUTPUT),
            compare_url(["first", HOSTILE_RUN]),
        ]
        for url in pages:
            page.goto(served.url.rstrip("/") + url)
            assert page.locator("main svg, main script, main img, main iframe").count() == 0, url
        for qid, output in HOSTILE_OUTPUT.items():
            page.goto(served.url.rstrip("/") + run_url(HOSTILE_RUN, "sample", qid))
            assert page.locator("#response").text_content() == output
            assert page.locator("#stem").text_content() == HOSTILE_STEM
            assert HOSTILE_STEM in page.locator("#prompt").text_content()
        page.goto(served.url)
        page.wait_for_timeout(2_000)  # a poll or two: the script writes the hostile name again
        assert page.locator("img, svg").count() == 0
        assert page.evaluate("window.__pwned") is None
    assert page.problems == []
