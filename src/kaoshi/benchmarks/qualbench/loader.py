"""QualBench: the original JSON array (QualBench.json) and the shuffled JSONL of the contamination study."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from kaoshi.benchmarks.qualbench.domains import QUALBENCH_DOMAINS
from kaoshi.data.answers import parse_judge_answer
from kaoshi.data.collect import (
    Dropped,
    LoadResult,
    QuestionCollector,
    optional_text,
    require_id,
    require_text,
)
from kaoshi.data.errors import DataError, FieldError, RowError
from kaoshi.data.hub import fetch
from kaoshi.data.model import Exam, Question, QuestionType, Source
from kaoshi.data.options import split_options
from kaoshi.data.quirks import QuirkLog
from kaoshi.data.rawio import iter_json_array, iter_jsonl, read_text
from kaoshi.qtypes import parse_letters

# Published question counts per domain (single, multi, true/false) of the 17,316-row QualBench.json, from
# the authors' analysis notebook; the cleaning rule keeps 17,298.
QUALBENCH_PUBLISHED_COUNTS: dict[str, tuple[int, int, int]] = {
    "安全生产": (4187, 844, 1489),
    "石油天然气": (733, 333, 538),
    "消防": (1444, 827, 1130),
    "建筑工程": (1420, 558, 0),
    "经济金融": (1052, 717, 608),
    "银行保险": (702, 431, 303),
}
QUALBENCH_PUBLISHED_TOTAL, QUALBENCH_PUBLISHED_CLEAN = 17316, 17298


def published_count_differences(questions: list[Question]) -> list[str]:
    """How the loaded questions' counts per domain and type differ from the published ones (empty: same)."""
    order = (QuestionType.SINGLE, QuestionType.MULTI, QuestionType.TRUE_FALSE)
    loaded: dict[str, list[int]] = {}
    for question in questions:
        counts = loaded.setdefault(question.domain or "(none)", [0, 0, 0])
        if question.type in order:
            counts[order.index(question.type)] += 1
    differences = []
    for domain in sorted({*QUALBENCH_PUBLISHED_COUNTS, *loaded}):
        want = QUALBENCH_PUBLISHED_COUNTS.get(domain, (0, 0, 0))
        got = tuple(loaded.get(domain, [0, 0, 0]))
        if got != want:
            differences.append(f"{domain}: loaded {got} (single, multi, true/false), published {want}")
    return differences


_QUALBENCH_TYPES = {
    "单选题": QuestionType.SINGLE,
    "多选题": QuestionType.MULTI,
    "判断题": QuestionType.TRUE_FALSE,
}


def qualbench_question(record: Any, file: str, line: int | None) -> Question:
    """One QualBench record (original or shuffled layout) as a Question; FieldError on bad input."""
    if not isinstance(record, dict):
        raise FieldError(None, f"expected a JSON object, got {type(record).__name__}")
    question_id = require_id(record, "idx", "id")
    raw_type = require_text(record, "question_type", "type")
    qtype = _QUALBENCH_TYPES.get(raw_type.strip())
    if qtype is None:
        raise FieldError(
            "question_type", f"unknown question type {raw_type!r} (QualBench has 单选题, 多选题, 判断题)"
        )
    text = require_text(record, "question")
    # The shuffled file keeps the Chinese domain in sub_domain and a slug in domain.
    domain = optional_text(record, "sub_domain", "domain").strip() or None
    raw_answer = record.get("answer")
    if raw_answer is None or (isinstance(raw_answer, str) and not raw_answer.strip()):
        raise FieldError("answer", "missing required field")
    options: tuple[tuple[str, str], ...] = ()
    if qtype is QuestionType.TRUE_FALSE:
        stem = text.strip()
        answer: frozenset[str] | bool = parse_judge_answer(raw_answer)
    elif qtype.is_choice:
        stem, options = split_options(text)
        if not options:
            raise FieldError("question", "no options found (expected lines such as 'A．…' after the stem)")
        answer = parse_letters(raw_answer, qtype)
    else:
        raise FieldError("question_type", f"QualBench has no {qtype.value} questions")
    return Question(
        id=question_id,
        type=qtype,
        stem=stem,
        options=options,
        answer=answer,
        explanation=optional_text(record, "explanation", "explan"),
        domain=domain,
        category=QUALBENCH_DOMAINS.get(domain or ""),
        split="test",
        source=Source(file, line) if line is not None else None,
        verbatim=(
            ("question", text),
            ("answer", str(raw_answer)),
            ("explanation", optional_text(record, "explanation", "explan")),
        ),
    )


def load_qualbench(path: Path, *, clean: bool = False) -> LoadResult:
    """Load QualBench.json (array) or QualBench_shuffled.jsonl; `clean` applies the authors' cleaning rule."""
    text = read_text(path)
    file = str(path)
    rows = iter_json_array(path, text) if _is_array_file(path, text) else iter_jsonl(path, text)
    collector = QuestionCollector(file)
    raw_answers: dict[str, Any] = {}
    for item in rows:
        if isinstance(item, RowError):
            collector.error(item)
            continue
        line, record = item
        question = collector.add(line, partial(qualbench_question, record, file, line))
        if question is not None:
            raw_answers[question.id] = record.get("answer")
    questions = collector.questions
    dropped: tuple[Dropped, ...] = ()
    if clean:
        questions, dropped = clean_qualbench(questions, raw_answers)
    warnings = _answer_warnings(questions) if not clean else ()
    exam = Exam("qualbench", tuple(questions), metadata={"benchmark": "qualbench", "path": file})
    return LoadResult(exam, tuple(collector.errors), dropped, warnings)


def load_qualbench_hub(hub_id: str) -> LoadResult:
    """QualBench from the Hugging Face hub: every split of the dataset, as the one test split."""
    dataset = fetch(hub_id)
    collector = QuestionCollector(f"hf://{hub_id}")
    for split_name in dataset:
        for index, record in enumerate(dataset[split_name]):
            collector.add(index + 1, partial(qualbench_question, dict(record), collector.file, None))
    exam = Exam("qualbench", tuple(collector.questions), metadata={"benchmark": "qualbench", "path": hub_id})
    return LoadResult(exam, tuple(collector.errors))


def _is_array_file(path: Path, text: str) -> bool:
    """The original file is one JSON array; a .json file holding anything else is refused, not misread."""
    if text.lstrip().startswith("["):
        return True
    if path.suffix == ".json" and "\n" not in text.strip():
        raise DataError(
            f"{path}: expected a JSON array of question objects",
            (RowError(str(path), 1, None, "file does not start with '['"),),
        )
    return False


def clean_qualbench(
    questions: list[Question], raw_answers: dict[str, Any]
) -> tuple[list[Question], tuple[Dropped, ...]]:
    """The authors' rule: keep 判断题 answered exactly 正确/错误, choice questions whose answer letters are
    all option letters, and the first of repeated question texts."""
    kept: list[Question] = []
    dropped: list[Dropped] = []
    seen_text: dict[str, str] = {}
    for question in questions:
        reason = _clean_reason(question, raw_answers.get(question.id))
        full_text = question.stem + "\n" + "\n".join(text for _, text in question.options)
        if reason is None and full_text in seen_text:
            reason = f"repeats the question text of id {seen_text[full_text]}"
        if reason is not None:
            dropped.append(Dropped(question.id, reason))
            continue
        seen_text[full_text] = question.id
        kept.append(question)
    return kept, tuple(dropped)


def _clean_reason(question: Question, raw_answer: Any) -> str | None:
    if question.type is QuestionType.TRUE_FALSE:
        if str(raw_answer).strip() not in ("正确", "错误"):
            return f"true/false answer {raw_answer!r} is not 正确 or 错误"
        return None
    assert isinstance(question.answer, frozenset)
    outside = sorted(question.answer - set(question.letters))
    if outside:
        return f"answer letter(s) {''.join(outside)} not among options {''.join(question.letters)}"
    return None


OUTSIDE_OPTIONS = "have answer letters outside their options (--clean drops them)"


def _answer_warnings(questions: list[Question]) -> tuple[str, ...]:
    """One warning naming where (file:line and id) the answers outside their options are."""
    log = QuirkLog()
    for q in questions:
        if isinstance(q.answer, frozenset) and not q.answer <= set(q.letters):
            file, line = (q.source.file, q.source.line) if q.source is not None else ("", None)
            log.note(OUTSIDE_OPTIONS, file, line, f"id {q.id}")
    return log.warnings()
