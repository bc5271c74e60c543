"""Plots: real PNGs with Chinese labels drawn in a font that has the glyphs."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kaoshi.benchmarks import english_names
from kaoshi.cli.main import main
from kaoshi.report import fonts, summarize
from kaoshi.report.fonts import find_cjk_font
from kaoshi.report.plot import PlotError, ascii_labels, bar_chart, draw, png_bytes, save_figure
from tests.support.stores import REPORT_SAMPLES

matplotlib = pytest.importorskip(
    "matplotlib", reason="plot tests need the plot extra (make test installs it)"
)


def image_stats(path: Path) -> tuple[int, int, float, int]:
    """(height, width, share of non-white pixels, distinct colours)."""
    from matplotlib.image import imread

    pixels = imread(path)
    rgb = pixels[..., :3].reshape(-1, 3)
    non_white = float((rgb < 0.98).any(axis=1).mean())
    colours = len({tuple(row) for row in (rgb[:: max(1, len(rgb) // 20000)] * 255).astype(int)})
    return pixels.shape[0], pixels.shape[1], non_white, colours


def test_a_cjk_font_is_available() -> None:
    font = find_cjk_font()
    assert font is not None, (
        "no CJK font: install fonts-wqy-microhei (make test does it on Debian as root) or set KAOSHI_CJK_FONT"
    )


def glyph_bitmap(font_path: str, char: str) -> bytes:
    """One character drawn with FreeType, independently of kaoshi's own check."""
    import numpy as np
    from matplotlib.ft2font import FT2Font

    font = FT2Font(font_path)
    font.set_size(40, 72)
    font.set_text(char)
    font.draw_glyphs_to_bitmap()
    return np.asarray(font.get_image()).tobytes()


def last_resort_font() -> str:
    """matplotlib's bundled placeholder font: it maps every code point, drawing one box per block."""
    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "LastResortHE-Regular.ttf"
    if not path.is_file():
        pytest.skip("this matplotlib does not bundle LastResortHE")
    return str(path)


def test_the_chosen_font_draws_different_chinese_characters_differently() -> None:
    """A font that covers Chinese in its character map may still draw placeholder boxes only."""
    font = find_cjk_font()
    assert font is not None
    first, second = glyph_bitmap(font, "考"), glyph_bitmap(font, "试")
    assert any(first) and any(second)
    assert first != second, f"{font} draws 考 and 试 alike: placeholder glyphs, not Chinese"


def test_a_placeholder_font_is_not_taken_for_a_chinese_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """LastResortHE covers every code point, so a character-map check accepts it; it draws boxes."""
    placeholder = last_resort_font()
    assert glyph_bitmap(placeholder, "考") == glyph_bitmap(placeholder, "试")  # why it must be refused
    monkeypatch.setenv("KAOSHI_CJK_FONT", placeholder)
    font = find_cjk_font()
    assert font is None or glyph_bitmap(font, "考") != glyph_bitmap(font, "试"), f"{font} was accepted"
    monkeypatch.delenv("KAOSHI_CJK_FONT")
    # Also when it is the only font found on the system (the uncached search, so other tests keep theirs).
    monkeypatch.setattr(fonts, "_candidates", lambda: iter([placeholder]))
    monkeypatch.setattr(fonts, "_search", fonts._search.__wrapped__)
    assert find_cjk_font() is None


def test_a_font_installed_after_matplotlibs_cache_was_built_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib import font_manager

    system_font = find_cjk_font()
    if system_font is None or system_font not in font_manager.findSystemFonts():
        pytest.skip("no system CJK font")
    stale = [entry for entry in font_manager.fontManager.ttflist if entry.fname != system_font]
    monkeypatch.setattr(font_manager.fontManager, "ttflist", stale)  # the cache predates the font
    monkeypatch.setattr(fonts, "_search", fonts._search.__wrapped__)
    assert find_cjk_font() == system_font


def test_without_a_chinese_font_the_plot_has_ascii_labels_and_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], two_runs: Path, tmp_path: Path
) -> None:
    monkeypatch.setenv("KAOSHI_CJK_FONT", last_resort_font())
    out = tmp_path / "bar.png"
    with pytest.warns(UserWarning) as caught:
        code = main(["plot", "weak", "strong", "--by", "domain", "-o", str(out), "--store", str(two_runs)])
    assert code == 0, capsys.readouterr().err
    messages = [str(w.message) for w in caught if "fonts-wqy-microhei" in str(w.message)]
    assert len(messages) == 1, [str(w.message) for w in caught]
    assert "LastResortHE" in messages[0] and "fonts-noto-cjk" in messages[0]
    assert "domain 1 = 信息技术" in messages[0]  # the stand-in for a name with no English one
    assert not [w for w in caught if "missing from font" in str(w.message)]  # no box was drawn
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    summary = summarize("运行", REPORT_SAMPLES, ["domain"])
    with pytest.warns(UserWarning, match="run 1 = 运行"):
        figure = bar_chart([summary], "domain")
    axes = figure.axes[0]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["d1", "d2"]
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ["run 1"]


@pytest.mark.parametrize(
    ("labels", "drawn", "replaced"),
    [
        (["d1", "d2"], ["d1", "d2"], {}),
        (["安全生产", "消防"], ["Production Safety", "Fire Safety"],
         {"Production Safety": "安全生产", "Fire Safety": "消防"}),
        (["高等数学", "信息技术", "其他"], ["Advanced Mathematics", "domain 1", "domain 2"],
         {"Advanced Mathematics": "高等数学", "domain 1": "信息技术", "domain 2": "其他"}),
    ],
)  # fmt: skip
def test_ascii_labels(labels: list[str], drawn: list[str], replaced: dict[str, str]) -> None:
    """The English names come from the benchmarks' papers (QualBench's domains, C-Eval's subjects)."""
    assert ascii_labels(labels, "domain", english_names()) == (drawn, replaced)


def test_without_english_names_every_chinese_label_gets_a_stand_in() -> None:
    assert ascii_labels(["安全生产", "d1"], "domain") == (["domain 1", "d1"], {"domain 1": "安全生产"})


@pytest.mark.parametrize("kind", ["bar", "radar"])
def test_plot_command_writes_a_png_with_chinese_labels(
    kind: str,
    capsys: pytest.CaptureFixture[str],
    two_runs: Path,
    tmp_path: Path,
) -> None:
    out = tmp_path / f"{kind}.png"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(
            [
                "plot",
                "weak",
                "strong",
                "--by",
                "domain",
                "--kind",
                kind,
                "-o",
                str(out),
                "--store",
                str(two_runs),
            ]
        )
    assert code == 0, capsys.readouterr().err
    missing = [
        str(w.message) for w in caught if "missing from font" in str(w.message) or "no font" in str(w.message)
    ]
    assert not missing, missing
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width, non_white, colours = image_stats(out)
    assert height >= 400 and width >= 600
    assert 0.02 < non_white < 0.9 and colours > 10  # drawn, not blank, not a solid block


def test_missing_cjk_glyphs_would_be_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a CJK font the figure still draws, with a warning that says what to install."""
    monkeypatch.setattr("kaoshi.report.plot.cjk_font_family", lambda: None)
    summary = summarize("r", REPORT_SAMPLES, ["domain"])
    with pytest.warns(UserWarning, match="fonts-wqy-microhei"):
        png_bytes(bar_chart([summary], "domain"))


def test_plot_refusals(tmp_path: Path) -> None:
    summary = summarize("r", REPORT_SAMPLES, ["domain", "type"])
    with pytest.raises(PlotError, match="at least 3"):
        draw([summary], "domain", "radar")  # d1, d2 only
    with pytest.raises(PlotError, match="no subject"):
        draw([summarize("r", REPORT_SAMPLES, ["subject"])], "subject", "bar")
    with pytest.raises(PlotError, match="must end in"):
        save_figure(draw([summary], "type", "bar"), tmp_path / "fig.gif")


def _summaries(store_path: Path, key: str, runs: tuple[str, ...] = ("weak", "strong")) -> list[object]:
    from kaoshi.store import Store

    with Store(store_path) as store:
        return [summarize(run, list(store.iter_samples(run)), [key]) for run in runs]


def _texts(figure: object) -> list[str]:
    axes = figure.axes[0]  # type: ignore[attr-defined]
    return [t.get_text() for t in (*axes.texts, *figure.texts)]  # type: ignore[attr-defined]


def test_bars_label_zero_and_leave_ungraded_groups_empty(two_runs: Path, tmp_path: Path) -> None:
    """A run wrong on every question is drawn at a labelled 0%; open answers, ungraded, get no bar."""
    from tests.support.runs import mock_script

    script = mock_script(tmp_path / "zero.jsonl", set())
    run = ["run", "--benchmark", "sample", "--model", f"mock:{script}", "--run-name", "zero"]
    assert main([*run, "--store", str(two_runs)]) == 0
    figure = bar_chart(_summaries(two_runs, "type", ("zero", "strong")), "type")  # type: ignore[arg-type]
    axes = figure.axes[0]
    texts = [t.get_text() for t in axes.texts]
    assert [t.get_text() for t in axes.get_xticklabels()] == ["judge", "multi", "open", "single"]
    assert texts.count("n/a") == 2  # open: one per run, and no bar
    assert texts.count("0") == 3 and texts.count("100") == 3
    heights = [p.get_height() for p in axes.patches]
    assert sum(1 for h in heights if h != h) == 2  # NaN: nothing drawn for the ungraded group
    png_bytes(figure)


def test_the_radar_leaves_out_what_no_run_has_an_accuracy_in(two_runs: Path) -> None:
    figure = draw(_summaries(two_runs, "type"), "type", "radar")  # type: ignore[arg-type]
    ticks = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert sorted(ticks) == ["judge", "multi", "single"]
    assert "not drawn, no accuracy: open" in _texts(figure)
    png_bytes(figure)


def test_without_by_a_plot_takes_the_grouping_the_runs_carry(tmp_path: Path) -> None:
    import kaoshi
    from kaoshi.cli.main import main
    from kaoshi.data import Exam, Question, QuestionType
    from kaoshi.report.plot import natural_grouping

    options = (("A", "2"), ("B", "3"))
    questions = tuple(
        Question(f"q{i}", QuestionType.SINGLE, "1+1=?", options, frozenset("A"), subject=s, category=c)
        for i, (s, c) in enumerate([("math", "STEM"), ("law", "Humanities"), ("art", "Humanities")])
    )
    store = tmp_path / "runs.sqlite"
    kaoshi.evaluate(Exam("e", questions), lambda prompt: "A", store=store, run_name="r")
    # CMMLU-like questions carry no domain: the plot is by category, as C-Eval's and CMMLU's are.
    assert natural_grouping([kaoshi.summarize("r", store=store)]) == "category"
    assert main(["plot", "r", "--store", str(store), "--output", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 0
