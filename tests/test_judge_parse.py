"""Judge-score parsing, table-driven over realistic judge replies."""

from __future__ import annotations

import pytest

from kaoshi.scoring.judge_parse import parse_judge_score
from tests.judge_cases import JUDGE_CASES


def test_the_table_is_large_enough() -> None:
    assert len(JUDGE_CASES) >= 40


@pytest.mark.parametrize(("reply", "expected"), JUDGE_CASES)
def test_judge_score(reply: str, expected: float | None) -> None:
    parsed = parse_judge_score(reply)
    assert parsed.score == expected, reply
    assert parsed.status == ("unparsed" if expected is None else "ok")
