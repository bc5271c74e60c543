"""A summary tallies a run's rows after adding up those alike in what a tally reads (their groups and the
counts they add) and each group's rows adding the same counts: the same numbers, in the same order, as
tallying every row one by one."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kaoshi.results.aggregate import GROUP_KEYS, summarize_rows
from kaoshi.results.metrics import UNKNOWN_GROUP
from kaoshi.results.tally import Tally, sample_counts
from kaoshi.store.columns import ScoreRow


@st.composite
def score_rows(draw: st.DrawFn) -> ScoreRow:
    qtype = draw(st.sampled_from(["single", "multi", "open"]))
    return ScoreRow(
        draw(st.sampled_from(["q1", "q2", "q3"])),
        "",
        qtype,
        draw(st.sampled_from([None, "", "数学", "物理"])),
        draw(st.sampled_from([None, "理科", "文科"])),
        draw(st.sampled_from([None, "STEM"])),
        draw(st.sampled_from([None, "甲"])),
        draw(st.sampled_from(["ok", "unparsed", "ambiguous", "error"])),
        None if qtype == "open" else draw(st.sampled_from([None, 0, 1])),
        draw(st.sampled_from([None, 0.0, 0.5, 1.0, 2.0])),
        draw(st.sampled_from([1.0, 2.0, 0.5])),
        draw(st.sampled_from([0, 1])),
        '["A"]',
        draw(st.sampled_from([None, '["A"]', '["B"]'])),
        None,
    )


def tallied_one_by_one(rows: list[ScoreRow]) -> Tally:
    """Every row's counts added, exactly."""
    columns = list(zip(*map(sample_counts, rows), strict=True))
    if not columns:
        return Tally()
    sums: list[Any] = [float(sum(map(Fraction, c))) if isinstance(c[0], float) else sum(c) for c in columns]
    return Tally(*sums)


@settings(max_examples=200, deadline=None)
@given(st.lists(score_rows(), max_size=40))
def test_a_summary_is_every_row_tallied(rows: list[ScoreRow]) -> None:
    summary = summarize_rows("r", rows)
    assert summary.overall == tallied_one_by_one(rows)
    for key, table in summary.groups.items():
        named = [UNKNOWN_GROUP if GROUP_KEYS[key](row) is None else GROUP_KEYS[key](row) for row in rows]
        assert list(table) == sorted(set(named))
        for name, tally in table.items():
            assert tally == tallied_one_by_one([row for row, n in zip(rows, named, strict=True) if n == name])
    subjects = list(dict.fromkeys(row.subject for row in rows if row.subject is not None))  # as first met
    accuracies = [summary.groups["subject"][s].accuracy for s in subjects]
    shown = [value for value in accuracies if value is not None]
    assert summary.macro.get("subject") == (sum(shown) / len(shown) if shown else None)
