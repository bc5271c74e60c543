"""A table that fits its terminal as it is, or once it leaves out its columns of lowest priority, is drawn
without rich (kaoshi.report.tables._drawn_whole), and drawn exactly as rich draws it: any table, any width,
the same characters; one rich must wrap, fold or narrow is left to rich."""

from __future__ import annotations

from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from kaoshi.report.tables import (
    TextTable,
    _drawn,
    _drawn_by_rich,
    _drawn_whole,
    _left_out_note,
    _shown,
    render_tables,
)

# what report cells hold (digits, percentages, CJK group names, dashes, the best mark), mostly; and what
# rich treats otherwise (tabs, newlines, spaces at the ends, a zero-width joiner, an accent, wide emoji)
_WORD = st.text(alphabet="aZ09.%/–—*|[]:安全生产经济金融", min_size=1, max_size=8)
_REPORTED = st.lists(_WORD, max_size=3).map(" ".join)
_ANY = st.text(
    alphabet=st.sampled_from([*"aZ09 .%/–—*|[]:安全生产经济金融", "\t", "\n", "\u200d", "\u0301", "🙂"])
)


@st.composite
def tables(draw: st.DrawFn) -> TextTable:
    text = draw(st.sampled_from([_REPORTED, st.one_of(_REPORTED, _ANY)]))
    columns = draw(st.integers(min_value=1, max_value=6))
    rows = draw(st.lists(st.lists(text, min_size=columns, max_size=columns), max_size=4))
    cells = [(r, c) for r in range(len(rows)) for c in range(columns)]
    best = draw(st.frozensets(st.sampled_from(cells), max_size=3)) if cells else frozenset()
    return TextTable(
        draw(text),
        draw(st.lists(text, min_size=columns, max_size=columns)),
        rows,
        best=best,
        note=draw(text),
        wrap=draw(st.frozensets(st.integers(min_value=0, max_value=columns - 1), max_size=2)),
        priority=draw(st.one_of(st.just(()), st.permutations(range(columns)))),
    )


REPORT = TextTable(
    "run — by domain",
    ("domain", "n", "accuracy", "95% CI"),
    [["安全生产", "16667", "73.3%", "72.6–74.0"], ["消防", "16667", "73.6%", "72.9–74.3"]],
    best=frozenset({(1, 2)}),
    note="1-shot · v2",
)


@settings(max_examples=400, deadline=None)
@given(tables(), st.integers(min_value=10, max_value=240))
@example(REPORT, 240)
@example(REPORT, 30)  # too wide: rich leaves out columns
@example(TextTable("", ("",), []), 20)
@example(TextTable("", ("\u0301",), [["\u0301"]]), 20)  # a lone accent: rich leaves its column empty
def test_a_table_drawn_whole_is_drawn_as_rich_draws_it(table: TextTable, width: int) -> None:
    drawn = _drawn_whole(table, width)
    event("drawn whole" if drawn is not None else "drawn by rich")
    if drawn is not None:
        assert drawn == _drawn_by_rich(table, width)


_PROSE = st.lists(st.text(alphabet="aZ09.%/–—*|[]:安全生产经济金融·×", min_size=1, max_size=12), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_PROSE.map(" ".join), _PROSE.map(" ".join), st.integers(min_value=10, max_value=120))
@example("run — objective vs subjective", "open answers are scored once a judge has graded them", 200)
def test_a_title_or_note_wider_than_its_table_is_broken_as_rich_breaks_it(
    title: str, note: str, width: int
) -> None:
    table = TextTable(title, ("part", "n", "accuracy"), [["objective", "40", "20.0%"]], note=note)
    drawn = _drawn_whole(table, width)
    event("drawn whole" if drawn is not None else "drawn by rich")
    if drawn is not None:
        assert drawn == _drawn_by_rich(table, width)


def test_a_report_table_that_fits_is_drawn_whole() -> None:
    assert _drawn_whole(REPORT, 240) is not None
    assert render_tables([REPORT, REPORT], "table", width=240) == (_drawn_by_rich(REPORT, 240) * 2).rstrip(
        "\n"
    )
    assert _drawn_whole(REPORT, 30) is None  # too wide: rich leaves out columns
    noted = TextTable(
        "run — points", ("subject", "score"), [["数学", "120"]], note="score = " + " ".join(["long"] * 12)
    )
    assert _drawn_whole(noted, 240) == _drawn_by_rich(noted, 240)  # the note broken to the table's width


def _cells(line: str) -> list[str]:
    return line.split(" ")


# A report's table as wide as the summary's: thirteen columns, of which a terminal of 80 or 120 shows some.
WIDE = TextTable(
    "run — by domain",
    _cells("domain n correct accuracy 95%-CI cut-off F1 graded ungraded unparsed ambiguous errors points"),
    [
        _cells("安全生产 16667 6791 41.6% 40.9–42.4 491 43.7% 16322 0 675 169 345 6791/16322"),
        _cells("石油天然气 16666 6703 41.1% 40.3–41.9 487 43.2% 16310 0 648 163 356 6703/16310"),
    ],
    best=frozenset({(0, 3)}),
    note="settings: 1-shot · no chat template (plain completion) · qualbench v2 · 50 new tokens",
)


@settings(max_examples=400, deadline=None)
@given(tables(), st.integers(min_value=10, max_value=240))
@example(WIDE, 120)
@example(WIDE, 80)
@example(WIDE, 40)
def test_any_table_at_any_width_is_drawn_as_rich_draws_it(table: TextTable, width: int) -> None:
    """What a terminal shows: the table whole, or without its columns of lowest priority (named in its
    note), drawn without rich where that fits as it is; the same characters as rich's either way."""
    shown, left_out = _shown(table, width)
    drawn = _drawn(table, width)
    whole = _drawn_whole(shown, width, _left_out_note(table, left_out, width)) is not None
    event(f"{'columns left out' if left_out else 'every column'}, drawn {'whole' if whole else 'by rich'}")
    assert drawn == _drawn_by_rich(table, width)


def test_a_report_at_a_terminal_leaves_out_columns_without_rich() -> None:
    for width in (80, 120):
        shown, left_out = _shown(WIDE, width)
        assert left_out and shown.needed_width() <= width
        assert _drawn_whole(shown, width, _left_out_note(WIDE, left_out, width)) is not None
        assert _drawn(WIDE, width) == _drawn_by_rich(WIDE, width)
        assert f"left out to fit {width} columns: " in " ".join(_drawn(WIDE, width).split())
