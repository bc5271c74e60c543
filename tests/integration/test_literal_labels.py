"""Names from the store are drawn and shown as they are (issue 40, item 6): a subject called `$x^{2$` is
not mathtext to matplotlib, and `{{ 7*7 }}` or `</script><b>x` is not a template or markup to the HTML
report and the viewer. Before the fix, matplotlib parsed the text between two dollar signs and `kaoshi plot`
and `kaoshi html` exited 1 and the viewer answered 500."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kaoshi.cli.main import main
from kaoshi.report import summarize
from kaoshi.report.plot import bar_chart, literal, png_bytes, radar_chart
from kaoshi.store import Store
from tests.support.stores import SPEC, sample

matplotlib = pytest.importorskip(
    "matplotlib", reason="plot tests need the plot extra (make test installs it)"
)

# Each is a domain, a subject and a category; the first two are also run names, the last the model's name.
HOSTILE_NAMES = ("$x^{2$", "a$b$c", "\\frac{", "{{ 7*7 }}", "</script><b>x")
RUNS = HOSTILE_NAMES[:2]
MODEL = HOSTILE_NAMES[-1]
KEYS = ("domain", "subject", "category")


def hostile_samples(right: int) -> list[Any]:
    """One question per hostile name (its domain, subject and category); the first `right` answered right."""
    return [
        sample(f"q{i}", domain=name, subject=name, category=name, correct=i < right)
        for i, name in enumerate(HOSTILE_NAMES)
    ]


@pytest.fixture
def hostile_store(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.sqlite"
    with Store(path) as store:
        for right, run in enumerate(RUNS, start=2):
            store.open_run(run, dataclasses.replace(SPEC, model=MODEL, n_questions=len(HOSTILE_NAMES)))
            for record in hostile_samples(right):
                store.add_sample(run, record)
            store.finish_run(run)
    return path


def shown(text: Any) -> str:
    """What matplotlib draws for a Text: its string after the renderer's own mathtext step, which must not
    take it for math (private, but it is the very step that raised)."""
    drawn, math = text._preprocess_math(text.get_text())
    assert math is False, f"{text.get_text()!r} would be drawn as mathtext"
    return str(drawn)


@pytest.mark.parametrize(
    "name", [*HOSTILE_NAMES, "$$", "1\\$ or 2$", "\\$x\\$", "$\\alpha$ 50%", "考试$安全$", "plain"]
)
def test_a_literal_label_is_drawn_as_it_is(name: str) -> None:
    from matplotlib.text import Text

    assert shown(Text(text=literal(name))) == name


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("chart", [bar_chart, radar_chart])
def test_hostile_names_are_drawn_literally(chart: Any, key: str) -> None:
    summaries = [summarize(run, hostile_samples(right), [key]) for right, run in enumerate(RUNS, start=2)]
    figure = chart(summaries, key)
    png_bytes(figure)  # raised ValueError (mathtext parse error) before the fix
    axes = figure.axes[0]
    assert sorted(shown(t) for t in axes.get_xticklabels()) == sorted(HOSTILE_NAMES)
    assert [shown(t) for t in axes.get_legend().get_texts()] == list(RUNS)


def test_a_hostile_title_is_drawn_literally() -> None:
    summary = summarize("r", hostile_samples(2), ["domain"])
    figure = bar_chart([summary], "domain", title="a $x^{2$ title")
    png_bytes(figure)
    assert shown(figure.axes[0].title) == "a $x^{2$ title"


@pytest.mark.parametrize("kind", ["bar", "radar"])
def test_kaoshi_plot_draws_hostile_names(hostile_store: Path, tmp_path: Path, kind: str) -> None:
    for key in KEYS:
        out = tmp_path / f"{kind}-{key}.png"
        args = ["plot", *RUNS, "--by", key, "--kind", kind, "-o", str(out), "--store", str(hostile_store)]
        assert main(args) == 0
        assert out.read_bytes().startswith(b"\x89PNG")


def test_kaoshi_html_shows_hostile_names_as_text(
    hostile_store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.html"
    assert main(["html", *RUNS, "--by", "subject", "-o", str(out), "--store", str(hostile_store)]) == 0
    assert "2 plot(s)" in capsys.readouterr().err  # the bar and the radar, none left out
    page = out.read_text(encoding="utf-8")
    assert page.count("<script") == 2  # the data block and our own script, nothing a name opened
    assert "<b>" not in page and "</script><b>" not in page
    assert "&lt;/script&gt;&lt;b&gt;x" in page  # the model's name in the runs table, and the subject row
    assert "\\u003c/script\\u003e\\u003cb\\u003ex" in page  # in the browser's JSON
    assert "{{ 7*7 }}" in page and "$x^{2$" in page  # neither a template nor math to anyone
    data = page[page.index('id="kaoshi-data">') :]
    assert data.index("</script>") > data.index("\\u003c/script")  # the block ends where it should


@pytest.fixture
def client(hostile_store: Path) -> Iterator[Any]:
    testclient = pytest.importorskip("starlette.testclient", reason="the view extra installs starlette")
    from kaoshi.view import create_app

    with testclient.TestClient(create_app(hostile_store), base_url="http://127.0.0.1:8000") as opened:
        yield opened


def test_the_viewer_draws_and_shows_hostile_names(client: Any) -> None:
    from kaoshi.view.urls import run_url

    for run in RUNS:
        page = client.get(run_url(run))
        assert page.status_code == 200, run  # 500 before the fix: the page draws the run's plot
        assert "<b>x" not in page.text and "&lt;/script&gt;&lt;b&gt;x" in page.text
        # the template is not run (no 49 in the page but in a time: the run was made at hh:49 or mm:49)
        untimed = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "", page.text)
        assert "{{ 7*7 }}" in page.text and not re.search(r"\b49\b", untimed)
        assert re.search(r"<img[^>]*plot\.png", page.text), "the run page shows its plot"
        plot = client.get(run_url(run, "plot.png"))
        assert plot.status_code == 200 and plot.content.startswith(b"\x89PNG")
        samples = client.get(run_url(run, "samples", query=[("subject", "</script><b>x")]))
        assert samples.status_code == 200 and "<b>x" not in samples.text
