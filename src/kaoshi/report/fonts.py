"""Finding a font that draws Chinese for matplotlib, whose default (DejaVu Sans) has no Chinese glyphs."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from kaoshi.errors import InputError

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
    "no font that draws Chinese found, so labels are drawn in ASCII instead of as boxes. Install one "
    "(Debian/Ubuntu: apt install fonts-wqy-microhei or fonts-noto-cjk; or pip install mplfonts) "
    f"or point ${FONT_ENV} at a .ttf/.otf/.ttc file"
)
_PROBE = "考试安全生产经济金融"
# Two different characters: a real CJK font draws them differently, a placeholder font identically.
_GLYPH_PAIR = ("考", "试")
# Fonts that map every code point to a block placeholder (matplotlib bundles LastResortHE).
_PLACEHOLDER_NAMES = ("lastresort", "last resort", "notdef")


def render_glyph(path: str, char: str) -> bytes:
    """The 8-bit bitmap of one character drawn with the font at `path`."""
    from matplotlib.ft2font import FT2Font

    font = FT2Font(path)
    font.set_size(32, 72)
    font.set_text(char)
    font.draw_glyphs_to_bitmap()
    import numpy as np

    return np.asarray(font.get_image()).tobytes()


@cache
def draws_chinese(path: str) -> bool:
    """Whether the font at `path` has real Chinese glyphs: it covers the probe characters, and two
    different characters render to two different, non-empty bitmaps (placeholder fonts fail this)."""
    from matplotlib.ft2font import FT2Font

    if any(name in Path(path).name.lower() for name in _PLACEHOLDER_NAMES):
        return False
    try:
        font = FT2Font(path)
        if any(name in font.family_name.lower() for name in _PLACEHOLDER_NAMES):
            return False
        charmap = font.get_charmap()
        if not all(ord(ch) in charmap for ch in _PROBE):
            return False
        first, second = (render_glyph(path, ch) for ch in _GLYPH_PAIR)
    except (OSError, RuntimeError, ValueError):
        return False
    return any(first) and any(second) and first != second


def _bundled_font_files() -> list[Path]:
    """Fonts shipped inside the optional `mplfonts` package, found without importing it."""
    spec = importlib.util.find_spec("mplfonts")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "fonts"
    return sorted(folder.glob("NotoSansCJK*")) + sorted(folder.glob("*.tt[fc]"))


def _family(path: str) -> str:
    from matplotlib.ft2font import FT2Font

    try:
        return str(FT2Font(path).family_name)
    except (OSError, RuntimeError, ValueError):
        return ""


def _candidates() -> Iterator[str]:
    """Font files to try, known CJK families first: matplotlib's cached list plus the system font
    folders scanned now (the cache may predate a font installed since), then mplfonts' fonts."""
    from matplotlib import font_manager

    families = {entry.fname: entry.name for entry in font_manager.fontManager.ttflist}
    for fname in font_manager.findSystemFonts():
        families.setdefault(fname, _family(fname))
    rank = {family: i for i, family in enumerate(CJK_FAMILIES)}
    yield from sorted(families, key=lambda fname: rank.get(families[fname], len(rank)))
    yield from (str(path) for path in _bundled_font_files())


@cache
def _search(chosen: str | None) -> str | None:
    if chosen:
        if not Path(chosen).is_file():
            raise InputError(f"{FONT_ENV}={chosen}: no such font file")
        return chosen if draws_chinese(chosen) else None
    return next((fname for fname in _candidates() if draws_chinese(fname)), None)


def find_cjk_font() -> str | None:
    """Path of a font that draws Chinese: $KAOSHI_CJK_FONT if it does, else a known CJK family, else
    any installed font or mplfonts' bundled Noto Sans CJK that does; None if there is none."""
    return _search(os.environ.get(FONT_ENV) or None)


def missing_font_message() -> str:
    """Why no CJK font is used and what to install."""
    chosen = os.environ.get(FONT_ENV)
    if chosen:
        return f"{FONT_ENV}={chosen} does not draw Chinese (placeholder glyphs only); {INSTALL_HINT}"
    return INSTALL_HINT


def cjk_font_family() -> str | None:
    """Register the CJK font with matplotlib and return its family name (None if there is none)."""
    from matplotlib import font_manager

    path = find_cjk_font()
    if path is None:
        return None
    font_manager.fontManager.addfont(path)
    name: str = font_manager.FontProperties(fname=path).get_name()
    return name
