"""The HTML report in a real headless Chromium: loads cleanly, filters work, model output stays text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.benchmarks import load_exam_result
from kaoshi.cli.main import main
from kaoshi.models import ModelOptions
from kaoshi.report.html import embed_json
from tests.support.browser import chromium
from tests.support.files import write_jsonl
from tests.support.models import ReasoningModel
from tests.support.runs import mock_script

INJECTIONS = {
    "s-safe-3": "<script>window.__pwned = 1</script>答案：B",
    "s-safe-4": '<img src=x onerror="window.__pwned = 2">答案：D',
    "s-fin-5": "</script><script>window.__pwned = 3</script>答案：A",
    "s-it-1": '<svg onload="window.__pwned = 4"></svg><b>答案：A</b>',
}

JUDGE_INJECTION = '评语：<img src=x onerror="window.__pwned=1">要点基本齐全。'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as instance:
        yield instance


@pytest.fixture
def report(capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path) -> Path:
    """Runs 'weak' and 'strong', plus 'evil' whose raw output tries to inject markup and scripts."""
    exam = load_exam_result("sample").exam
    script = mock_script(tmp_path / "evil.jsonl", {q.id for q in exam.questions})
    rows = [line for line in script.read_text(encoding="utf-8").splitlines()]
    import json

    replaced = [
        json.dumps({"id": r["id"], "response": INJECTIONS.get(r["id"], r["response"])}, ensure_ascii=False)
        for r in map(json.loads, rows)
    ]
    write_jsonl(script, replaced)
    store = str(two_runs)
    assert (
        main(
            [
                "run",
                "--benchmark",
                "sample",
                "--model",
                f"mock:{script}",
                "--run-name",
                "evil",
                "--store",
                store,
            ]
        )
        == 0
    )
    # A judge whose explanation carries markup too; it grades every open answer 7/10.
    judge_rows = [
        {"id": q.id, "response": f"{JUDGE_INJECTION}\n答案1得分：10\n答案2得分：7"}
        for q in exam.questions
        if q.type.value == "open"
    ]
    judge = write_jsonl(tmp_path / "judge.jsonl", judge_rows)
    assert main(["judge", "evil", "--judge", f"mock:{judge}", "--store", store]) == 0
    out = tmp_path / "report.html"
    assert main(["html", "evil", "weak", "strong", "-o", str(out), "--store", store]) == 0
    capsys.readouterr()
    return out


def headers(page: Any) -> list[str]:
    texts: list[str] = page.locator("#questions thead th").all_text_contents()
    return texts


def options(page: Any, select: str) -> list[str]:
    texts: list[str] = page.locator(f"{select} option").all_text_contents()
    return texts


# A C-Eval-like exam: subjects in categories, no domain; one subject's name tries to inject markup.
HOSTILE_SUBJECT = '<img src=x onerror="window.__pwned = 5">'
CEVAL_LIKE = [
    ("computer_network", "STEM"),
    ("computer_network", "STEM"),
    ("college_physics", "STEM"),
    ("art_studies", "Humanities"),
    ("law", "Social Science"),
    (HOSTILE_SUBJECT, "Other"),
]


@pytest.fixture
def ceval_like_report(capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path) -> Path:
    rows = [
        {
            "id": f"c-{i}",
            "type": "single",
            "question": f"第{i}题",
            "options": ["甲", "乙", "丙", "丁"],
            "answer": "A" if i % 2 else "B",
            "subject": subject,
            "category": category,
        }
        for i, (subject, category) in enumerate(CEVAL_LIKE)
    ]
    exam = write_jsonl(tmp_path / "exam.jsonl", rows)
    store = str(store_path)
    run = ["run", "--data", str(exam), "--model", "constant:A", "--run-name", "c", "--store", store]
    assert main(run) == 0
    out = tmp_path / "ceval.html"
    assert main(["html", "c", "-o", str(out), "--store", store]) == 0
    capsys.readouterr()
    return out


def test_embedded_json_cannot_close_its_script_element() -> None:
    text = embed_json({"response": "</script><script>alert(1)</script> & <!--"})
    assert "<" not in text and ">" not in text and "&" not in text


def test_report_in_a_real_browser(browser: Any, report: Path) -> None:
    page = browser.new_page()
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(report.as_uri())
    page.wait_for_selector("#question-rows tr.item")

    # No injected script or handler ran, and nothing was turned into an element.
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#questions img, #questions svg, #questions script, #questions b").count() == 0
    assert page.locator("figure img").count() == 2  # our bar and radar plots

    # The sample exam's groupings: domain, subject group and type (its subjects are its domains).
    assert headers(page) == ["id", "domain", "group", "type", "gold", "answer", "result"]
    assert "安全生产 (11)" in options(page, "#f-domain")
    count = page.locator("#count")
    assert count.text_content() == "44 question(s)"
    page.select_option("#f-domain", "安全生产")
    assert count.text_content() == "11 question(s)"
    page.select_option("#f-result", "judged")
    assert count.text_content() == "1 question(s)"  # the open question, graded by the judge
    page.locator("tr.item[data-id='s-safe-10']").click()
    judged = page.locator("tr.detail pre").all_text_contents()
    assert any(text.startswith("7/10, ") for text in judged)  # final score and points
    assert any(JUDGE_INJECTION in text for text in judged)  # the judge's reply, as text
    page.locator("tr.item[data-id='s-safe-10']").click()
    page.select_option("#f-result", "")
    page.select_option("#f-domain", "")
    page.fill("#f-search", "s-safe-4")
    assert count.text_content() == "1 question(s)"

    # The raw output shows as text, exactly as the model wrote it.
    page.locator("tr.item[data-id='s-safe-4']").click()
    shown = page.locator("tr.detail pre").all_text_contents()
    assert INJECTIONS["s-safe-4"] in shown
    assert any("高处作业" in text or "安全生产" in text or "方针" in text for text in shown)  # the prompt
    page.fill("#f-search", "")
    page.locator("tr.item[data-id='s-fin-5']").click()
    assert INJECTIONS["s-fin-5"] in page.locator("tr.detail pre").all_text_contents()

    # Another run: the weak model is wrong on 30 of the 40 objective questions.
    page.select_option("#f-run", label="weak")
    page.select_option("#f-result", "wrong")
    assert count.text_content() == "30 question(s)"
    page.select_option("#f-type", "judge")
    assert int(count.text_content().split()[0]) < 30

    # The summary compares the runs, best marked.
    assert page.locator("table.summary td.best").count() > 0
    assert page.evaluate("window.__pwned") is None
    assert not problems, problems
    page.close()


def test_a_ceval_like_report_is_browsed_by_subject_not_domain(browser: Any, ceval_like_report: Path) -> None:
    page = browser.new_page()
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(ceval_like_report.as_uri())
    page.wait_for_selector("#question-rows tr.item")

    assert headers(page) == ["id", "category", "subject", "type", "gold", "answer", "result"]
    assert page.locator("#f-domain").count() == 0
    assert options(page, "#f-category") == [
        "all",
        "STEM (3)",
        "Social Science (1)",
        "Humanities (1)",
        "Other (1)",
    ]
    assert options(page, "#f-subject") == [
        "all",
        f"{HOSTILE_SUBJECT} (1)",  # as text
        "art_studies (1)",
        "college_physics (1)",
        "computer_network (2)",
        "law (1)",
    ]
    count = page.locator("#count")
    assert count.text_content() == "6 question(s)"

    page.select_option("#f-subject", "computer_network")
    assert count.text_content() == "2 question(s)"
    shown = page.locator("#question-rows tr.item").evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert shown == ["c-0", "c-1"]
    page.select_option("#f-subject", "")
    page.select_option("#f-category", "STEM")
    assert count.text_content() == "3 question(s)"
    page.select_option("#f-category", "")

    # The hostile subject name stays text, in its filter and in its column.
    page.select_option("#f-subject", HOSTILE_SUBJECT)
    assert count.text_content() == "1 question(s)"
    assert page.locator("#question-rows tr.item td").nth(2).text_content() == HOSTILE_SUBJECT
    assert page.locator("img:not(figure img), #questions svg, #questions script").count() == 0
    assert page.evaluate("window.__pwned") is None
    assert not problems, problems
    page.close()


def test_a_samples_reasoning_shows_folded_and_as_text(browser: Any, tmp_path: Path) -> None:
    store, out = tmp_path / "s.sqlite", tmp_path / "report.html"
    model = ReasoningModel("thinker", ModelOptions(), ["s-safe-1"])
    kaoshi.evaluate("sample", model=model, run_name="thinker", store=store)
    assert main(["html", "thinker", "-o", str(out), "--store", str(store)]) == 0
    page = browser.new_page()
    page.goto(out.as_uri())
    page.wait_for_selector("#question-rows tr.item")
    page.locator("tr.item[data-id='s-safe-1']").click()
    folded = page.locator("tr.detail details")
    assert folded.count() == 1 and folded.evaluate("d => d.open") is False
    reasoning = folded.locator("pre").text_content() or ""
    assert reasoning.startswith("<b>想一想</b>：答案是")  # the markup as text
    summary = folded.locator("summary").text_content()
    assert summary == f"reasoning ({len(reasoning)} characters)"
    assert page.locator("#questions b").count() == 0
    page.locator("tr.item[data-id='s-safe-1']").click()
    page.locator("tr.item[data-id='s-safe-2']").click()  # no reasoning: nothing folded
    assert page.locator("tr.detail").count() == 1 and page.locator("tr.detail details").count() == 0
    page.close()
