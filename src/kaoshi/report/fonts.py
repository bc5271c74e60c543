"""Finding a font with Chinese glyphs for matplotlib, whose default (DejaVu Sans) has none."""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from pathlib import Path
from typing import Any

# Families known to cover simplified Chinese, most preferred first.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Sarasa Gothic SC",
    "SimHei",
    "Microsoft YaHei",
    "PingFang SC",
    "Heiti SC",
    "Arial Unicode MS",
    "Droid Sans Fallback",
    "AR PL UMing CN",
)
FONT_ENV = "KAOSHI_CJK_FONT"
INSTALL_HINT = (
    "no font with Chinese glyphs found; labels would show as boxes. Install one "
    "(Debian/Ubuntu: apt install fonts-wqy-microhei or fonts-noto-cjk; or pip install mplfonts) "
    f"or point {FONT_ENV} at a .ttf/.otf/.ttc file"
)
_PROBE = "考试安全生产经济金融"


def _bundled_font_files() -> list[Path]:
    """Fonts shipped inside the optional `mplfonts` package, found without importing it."""
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "fonts"
    return sorted(folder.glob("NotoSansCJK*")) + sorted(folder.glob("*.tt[fc]"))


def _covers_chinese(path: str) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        charmap = FT2Font(path).get_charmap()
    except (OSError, RuntimeError):
        return False
    return all(ord(ch) in charmap for ch in _PROBE)


@cache
def find_cjk_font() -> str | None:
    """Path of a font with Chinese glyphs: $KAOSHI_CJK_FONT, a known system family, any installed font
    that covers our probe characters, or mplfonts' bundled Noto Sans CJK; None if there is none."""
    from matplotlib import font_manager

    chosen = os.environ.get(FONT_ENV)
    if chosen:
        if not Path(chosen).is_file():
            raise ValueError(f"{FONT_ENV}={chosen}: no such font file")
        return chosen
    installed: list[Any] = font_manager.fontManager.ttflist
    by_family = {entry.name: entry.fname for entry in installed}
    for family in CJK_FAMILIES:
        if family in by_family and _covers_chinese(by_family[family]):
            return str(by_family[family])
    for entry in installed:
        if _covers_chinese(entry.fname):
            return str(entry.fname)
    # matplotlib's font cache may predate a font installed since; look at the files themselves.
    for fname in font_manager.findSystemFonts():
        if _covers_chinese(fname):
            return str(fname)
    for path in _bundled_font_files():
        if _covers_chinese(str(path)):
            return str(path)
    return None


def cjk_font_family() -> str | None:
    """Register the CJK font with matplotlib and return its family name (None if there is none)."""
    from matplotlib import font_manager

    path = find_cjk_font()
    if path is None:
        return None
    font_manager.fontManager.addfont(path)
    name: str = font_manager.FontProperties(fname=path).get_name()
    return name
