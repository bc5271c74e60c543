"""Plots: real PNGs with Chinese labels drawn in a font that has the glyphs."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.report import summarize
from kaoshi.report.fonts import find_cjk_font
from kaoshi.report.plot import PlotError, bar_chart, draw, png_bytes, save_figure
from tests.test_report import SAMPLES

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
    summary = summarize("r", SAMPLES, ["domain"])
    with pytest.warns(UserWarning, match="fonts-wqy-microhei"):
        png_bytes(bar_chart([summary], "domain"))


def test_plot_refusals(tmp_path: Path) -> None:
    summary = summarize("r", SAMPLES, ["domain", "type"])
    with pytest.raises(PlotError, match="at least 3"):
        draw([summary], "domain", "radar")  # d1, d2 only
    with pytest.raises(PlotError, match="no subject"):
        draw([summarize("r", SAMPLES, ["subject"])], "subject", "bar")
    with pytest.raises(PlotError, match="must end in"):
        save_figure(draw([summary], "type", "bar"), tmp_path / "fig.gif")
