"""Options embedded in QualBench question text: every separator, full-width letters, wrapped lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kaoshi.data.options import split_options

CASES = [
    # (question text, expected stem, expected options)
    (
        "灭火剂（）。\nA．清水\nB．泡沫\nC．二氧化碳\nD．砂土",
        "灭火剂（）。",
        ["清水", "泡沫", "二氧化碳", "砂土"],
    ),
    ("题干\nA.甲\nB.乙\nC.丙\nD.丁", "题干", ["甲", "乙", "丙", "丁"]),
    ("题干\nA、甲\nB、乙", "题干", ["甲", "乙"]),
    ("题干\nA:甲\nB:乙\nC:丙", "题干", ["甲", "乙", "丙"]),
    ("题干\nA：甲\nB：乙", "题干", ["甲", "乙"]),
    ("题干\nA 甲\nB 乙\nC 丙", "题干", ["甲", "乙", "丙"]),
    ("题干\nA) 甲\nB) 乙", "题干", ["甲", "乙"]),
    ("题干\nA） 甲\nB） 乙", "题干", ["甲", "乙"]),
    ("题干\nＡ．甲\nＢ．乙\nＣ．丙", "题干", ["甲", "乙", "丙"]),
    ("题干\n A ． 甲 \n B ． 乙 ", "题干", ["甲", "乙"]),
    ("题干\u3000\nA\u3000甲\nB\u3000乙", "题干", ["甲", "乙"]),
    # five or more options (multi-choice)
    ("题干\nA．一\nB．二\nC．三\nD．四\nE．五\nF．六", "题干", ["一", "二", "三", "四", "五", "六"]),
    # a wrapped option continues on the next line
    ("题干\nA．第一行\n续行\nB．乙", "题干", ["第一行\n续行", "乙"]),
    # a stem line that starts like an option does not end the stem
    (
        "A．某公司发生事故，问：\n下列说法正确的是（）。\nA．甲\nB．乙",
        "A．某公司发生事故，问：\n下列说法正确的是（）。",
        ["甲", "乙"],
    ),
    ("A公司的做法（）。\nA．正确\nB．错误", "A公司的做法（）。", ["正确", "错误"]),
    # multi-line stem
    ("第一段。\n第二段（）。\nA．甲\nB．乙", "第一段。\n第二段（）。", ["甲", "乙"]),
    # blank lines between options
    ("题干\n\nA．甲\n\nB．乙\n", "题干", ["甲", "乙"]),
    # options all on one line
    ("题干（） A．甲 B．乙 C．丙 D．丁", "题干（）", ["甲", "乙", "丙", "丁"]),
    ("题干（）A、甲 B、乙", "题干（）", ["甲", "乙"]),
    # no options at all
    ("只有题干，没有选项。", "只有题干，没有选项。", []),
    # letters out of order are not an option block
    ("题干\nB．乙\nA．甲", "题干\nB．乙\nA．甲", []),
    # a single 'A' line is not an option block
    ("题干\nA．甲", "题干\nA．甲", []),
]


@pytest.mark.parametrize(("text", "stem", "options"), CASES)
def test_split_options(text: str, stem: str, options: list[str]) -> None:
    got_stem, got_options = split_options(text)
    assert got_stem == stem
    assert [body for _, body in got_options] == options
    assert [letter for letter, _ in got_options] == [chr(ord("A") + i) for i in range(len(options))]


@given(st.text(alphabet=st.sampled_from(list("ABCDＡＢ．.、:： \n甲乙题干（）")), max_size=80))
def test_split_options_never_crashes_and_letters_run_in_order(text: str) -> None:
    _, options = split_options(text)
    assert [letter for letter, _ in options] == [chr(ord("A") + i) for i in range(len(options))]
    assert len(options) != 1


def test_inline_fallback_ignores_letters_inside_the_stem() -> None:
    assert split_options("维生素A、B）的作用") == ("维生素A、B）的作用", ())
