"""Question types: every built-in type has its kind, and a new type is one registration that flows through
the prompts, extraction, grading, the LLM extractor, fine-tuning targets, runs and summaries unchanged."""

from __future__ import annotations

import enum
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import kaoshi
from kaoshi.benchmarks import get_template
from kaoshi.data.errors import FieldError
from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.finetune.examples import target_text
from kaoshi.prompts import RenderOptions, answer_candidates
from kaoshi.qtypes import (
    QUESTION_KINDS,
    QuestionKind,
    Wording,
    extract_answer,
    grade_answer,
    kind_of,
    parse_letters,
    register_kind,
)
from kaoshi.qtypes.shared import answer_then_explanation
from kaoshi.runner.llm_extract import extractor_prompt
from kaoshi.scoring import Extraction, clean_output, grade_exact
from tests.support.files import write_jsonl


class ToyType(str, enum.Enum):
    """A type kaoshi does not ship. QuestionType lists the built-in types (those the loaders parse and the
    store rebuilds questions of); everything a type does is its kind's, looked up by the type's name."""

    CLOZE = "toy-cloze"  # kaoshi ships a cloze type of its own, "cloze"


_STATED = re.compile(r"答案\s*:\s*(.+)")


def read_cloze(question: Question, text: str, prompt: str | None) -> Extraction:
    """The text after the last '答案：', else a one-line reply."""
    cleaned = clean_output(text, prompt)
    stated = _STATED.findall(cleaned)
    lines = cleaned.splitlines()
    answer = stated[-1] if stated else lines[0] if len(lines) == 1 else ""
    answer = answer.strip().rstrip("。.")
    return Extraction(answer, "ok") if answer else Extraction(None, "unparsed")


def parse_blank(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FieldError("answer", "a cloze question needs the missing text")
    return value.strip()


CLOZE = QuestionKind(
    name=ToyType.CLOZE.value,
    wording=Wording(
        name_zh="填空题",
        plain="以下是填空题，请写出括号处应填的内容。",
        exam_style="请回答下面的填空题。先写“答案：”和所填内容，再在“解析：”后说明理由。",
        extractor="只输出它最终填写的内容",
    ),
    objective=True,
    has_options=False,
    ranking=None,
    extract=read_cloze,
    grade=grade_exact,
    parse_gold=parse_blank,
    target=answer_then_explanation,
)


def cloze_question(question_id: str, stem: str, answer: str, **fields: str) -> Question:
    return Question(question_id, ToyType.CLOZE, stem, answer=answer, **fields)  # type: ignore[arg-type]


CAPITAL = cloze_question("c1", "中华人民共和国的首都是（　）。", "北京", explanation="首都是北京。")
RIVER = cloze_question("c2", "中国最长的河流是（　）。", "长江")
TRUE_FALSE = Question("j1", QuestionType.TRUE_FALSE, "长江是中国最长的河流。", answer=True)
SOLVED = cloze_question("c0", "一年有（　）个月。", "十二", split="dev")
EXAM = Exam("toy", (CAPITAL, RIVER, TRUE_FALSE), fewshot=(SOLVED,))


@pytest.fixture
def cloze() -> Iterator[QuestionKind]:
    kind = register_kind(CLOZE)
    yield kind
    # The registry is the process's: leave it as the other tests expect it.
    del QUESTION_KINDS[kind.name]


@pytest.mark.parametrize(
    ("qtype", "objective", "choice", "candidates"),
    [
        (QuestionType.SINGLE, True, True, ("A", "B", "C")),
        (QuestionType.MULTI, True, True, ("A", "B", "C", "AB", "AC", "BC", "ABC")),
        (QuestionType.TRUE_FALSE, True, False, ("正确", "错误")),
        (QuestionType.OPEN, False, False, ()),
    ],
)
def test_each_built_in_type_has_its_kind(
    qtype: QuestionType, objective: bool, choice: bool, candidates: tuple[str, ...]
) -> None:
    kind = kind_of(qtype)
    assert kind.name == qtype.value and kind_of(qtype.value) is kind
    assert (qtype.is_objective, qtype.is_choice) == (objective, choice)
    options = (("A", "甲"), ("B", "乙"), ("C", "丙")) if choice else ()
    assert answer_candidates(Question("q", qtype, "题干", options)) == candidates


@pytest.mark.parametrize("first", ["kaoshi.qtypes", "kaoshi.scoring", "kaoshi.data.model", "kaoshi.prompts"])
def test_the_kinds_import_whichever_module_comes_first(first: str) -> None:
    # The kinds are built from scoring's and data's functions, which look kinds up when called: a fresh
    # interpreter importing any of them first must still find every kind.
    code = f"import {first}\nfrom kaoshi.data import QuestionType\nprint([t.is_choice for t in QuestionType])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[True, True, False, False, False, False]"


def test_unknown_and_duplicate_types_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown question type 'toy-cloze' \(registered: single, multi"):
        kind_of(ToyType.CLOZE)
    with pytest.raises(ValueError, match="question type 'single' is already registered"):
        register_kind(kind_of(QuestionType.SINGLE))


def test_gold_answers_are_parsed_by_their_type() -> None:
    assert parse_letters("A、C", QuestionType.MULTI) == frozenset("AC")
    with pytest.raises(FieldError, match="single-choice answer must be one letter, got 'AC'"):
        parse_letters("AC", QuestionType.SINGLE)
    assert kind_of(QuestionType.TRUE_FALSE).parse_gold("对") is True
    assert kind_of(QuestionType.OPEN).parse_gold(" 参考答案 ") == "参考答案"


def test_a_new_type_has_its_wording_in_kaoshis_prompts(cloze: QuestionKind, tmp_path: Path) -> None:
    plain = get_template("default").render(CAPITAL, EXAM, RenderOptions(shots=1)).text
    assert plain == (
        "以下是填空题，请写出括号处应填的内容。\n\n"
        "一年有（　）个月。\n答案：十二\n\n"
        "中华人民共和国的首都是（　）。\n答案："
    )
    lhmke = get_template("lhmke").render(CAPITAL, EXAM, RenderOptions(shots=0)).text
    assert lhmke == f"{CLOZE.wording.exam_style}\n\n题目：中华人民共和国的首都是（　）。\n答案："
    # The authors' QualBench prompt has no line for the type: kaoshi's QualBench-style wording stands in.
    paper = get_template("qualbench").render(CAPITAL, EXAM, RenderOptions(shots=0)).text
    assert paper.startswith(f"{CLOZE.wording.exam_style}\n题目：")
    template = tmp_path / "mine.j2"
    template.write_text("{{ type_zh }}（{{ type }}）：{{ question }}", encoding="utf-8")
    user = get_template(str(template)).render(CAPITAL, EXAM, RenderOptions(shots=0)).text
    assert user == "填空题（toy-cloze）：中华人民共和国的首都是（　）。"


def test_a_new_type_is_read_graded_and_taught(cloze: QuestionKind) -> None:
    reply = extract_answer(CAPITAL, "解析：首都在北京。\n答案：北京。")
    assert reply == Extraction("北京", "ok")
    assert grade_answer(CAPITAL, reply.answer) == grade_answer(CAPITAL, "北京", "f1")
    assert (grade_answer(CAPITAL, "北京").correct, grade_answer(CAPITAL, "上海").points) == (True, 0.0)
    assert extract_answer(CAPITAL, "我不知道\n也许是北京") == Extraction(None, "unparsed")
    assert answer_candidates(CAPITAL) == ()
    assert "只输出它最终填写的内容" in extractor_prompt(CAPITAL, "首都嘛……")
    assert target_text(CAPITAL, with_explanation=True) == "北京\n解析：首都是北京。"


def test_a_new_type_runs_and_is_summarized(cloze: QuestionKind) -> None:
    def model(prompt: str) -> str:
        if prompt.startswith("以下是判断题"):
            return "答案：正确"
        return "答案：北京" if "首都" in prompt else "答案：黄河"

    result = kaoshi.evaluate(EXAM, model)
    samples = {s.question_id: s for s in result.samples}
    assert [(s.qtype, s.answer, s.correct) for s in samples.values()] == [
        ("toy-cloze", "北京", True),
        ("toy-cloze", "黄河", False),
        ("judge", True, True),
    ]
    assert samples["c1"].prompt.startswith(CLOZE.wording.plain)
    assert set(result.summary.parts) == {"objective"} and result.summary.overall.correct == 2
    assert result.summary.groups["type"]["toy-cloze"].accuracy == 0.5


def test_a_type_without_candidates_is_generated_in_a_loglik_run(cloze: QuestionKind, tmp_path: Path) -> None:
    script = write_jsonl(
        tmp_path / "mock.jsonl",
        [
            {"id": "c1", "response": "答案：北京"},
            {"id": "c2", "response": "答案：长江"},
            {"id": "j1", "logprobs": {"正确": -0.1, "错误": -2.5}},
        ],
    )
    result = kaoshi.evaluate(EXAM, f"mock:{script}", method="loglik")
    by = {s.question_id: (s.extracted_by, s.correct) for s in result.samples}
    assert by == {"c1": ("rules", True), "c2": ("rules", True), "j1": ("loglik", True)}
