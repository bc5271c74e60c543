"""Arbitrary input never crashes a loader: it loads (a choice question with its options), or raises
DataError naming file and line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kaoshi.benchmarks import load_exam_result
from kaoshi.data import DataError, QuestionType

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.text(alphabet="ABCDＡ正确错误对错．\n题干 ", max_size=20),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["A", "B", "x"]), inner, max_size=3)
    ),
    max_leaves=6,
)
qualbench_keys = ["idx", "question_type", "type", "domain", "sub_domain", "question", "answer", "explanation"]
gaokao_keys = ["index", "question", "passage", "answer", "standard_answer", "score", "analysis", "year"]
kaoshi_keys = ["id", "type", "question", "options", "answer", "points", "split", "exam", "subject"]
type_values = st.sampled_from(["单选题", "多选题", "判断题", "single", "multi", "judge", "open", "x"])


def rows(keys: list[str]) -> st.SearchStrategy[list[dict[str, Any]]]:
    row = st.fixed_dictionaries(
        {}, optional={k: (type_values if k in ("type", "question_type") else values) for k in keys}
    )
    return st.lists(row, max_size=6)


def check(suffix: str, text: bytes, benchmark: str | None, name: str = "exam") -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text)
        try:
            result = load_exam_result(benchmark, path, on_invalid="skip")
        except DataError as exc:
            assert str(path) in str(exc) or "no questions" in str(exc)
            return
        for error in result.errors:
            assert error.file == str(path) and error.line is not None and error.reason
        for question in result.exam.questions:
            assert isinstance(question.stem, str)
            if question.type in (QuestionType.SINGLE, QuestionType.MULTI):
                assert len(question.options) >= 2, question


# Six properties of 150 generated files each: about 15 s together, so outside `make test-fast`.
pytestmark = pytest.mark.slow

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(rows(qualbench_keys))
def test_qualbench_jsonl_rows(data: list[dict[str, Any]]) -> None:
    check(".jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in data).encode(), "qualbench")


@SETTINGS
@given(rows(qualbench_keys))
def test_qualbench_json_array(data: list[dict[str, Any]]) -> None:
    check(".json", json.dumps(data, ensure_ascii=False, indent=2).encode(), "qualbench")


@SETTINGS
@given(rows(kaoshi_keys))
def test_kaoshi_rows(data: list[dict[str, Any]]) -> None:
    check(".jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in data).encode(), "kaoshi")


@SETTINGS
@given(st.binary(max_size=200))
def test_arbitrary_bytes(data: bytes) -> None:
    for suffix, benchmark in ((".jsonl", "kaoshi"), (".json", "qualbench"), (".jsonl", None)):
        check(suffix, data, benchmark)


@SETTINGS
@given(rows(gaokao_keys), st.sampled_from(["Objective_Questions", "Subjective_Questions"]))
def test_gaokao_rows(data: list[dict[str, Any]], folder: str) -> None:
    keyword = "2010-2022_Math_I_MCQs"
    text = json.dumps({"keywords": keyword, "example": data}, ensure_ascii=False, indent=1)
    check(".json", text.encode(), "gaokao-bench", f"{folder}/{keyword}")


@SETTINGS
@given(st.lists(st.text(alphabet="abcdABCD.． 题干\n", max_size=12), max_size=24))
def test_logiqa_lines(lines: list[str]) -> None:
    check(".txt", "\n".join(lines).encode(), "logiqa", "zh_test")
