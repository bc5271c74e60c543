"""The exam data model: frozen, typed values shared by every stage."""

from __future__ import annotations

import enum
import hashlib
import json
import math
import reprlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Literal, get_args

from kaoshi.data.answers import parse_judge_answer, parse_option_letters, require_among_options
from kaoshi.data.errors import FieldError
from kaoshi.errors import InputError, UnknownName

# Gold answers: a set of option letters (single/multi), a truth value (judge), or reference text (open,
# cloze).
# None means the split publishes no answer (C-Eval test).
Gold = frozenset[str] | bool | str | None


class QuestionType(str, enum.Enum):
    """The question types kaoshi loads and stores. What a type does (its prompt wording, candidates,
    extraction, grading) is its kind's, in kaoshi.qtypes."""

    SINGLE = "single"  # 单选题
    MULTI = "multi"  # 多选题
    TRUE_FALSE = "judge"  # 判断题 (stored as "judge", as files and stores have always named it)
    OPEN = "open"  # 主观题
    CLOZE = "cloze"  # 填空题: reference text, blanks separated by ';'
    # Several sub-questions sharing one text (完形填空, 七选五, 阅读理解): one letter per sub-question,
    # each with its points (GAOKAO-Bench's multi_question_choice, five_out_of_seven, cloze).
    MULTI_QUESTION = "multi_question"

    @property
    def is_choice(self) -> bool:
        """Whether questions of this type show lettered options."""
        return self.value in _SHOWS_OPTIONS

    @property
    def is_objective(self) -> bool:
        """Whether answers of this type are checked against the gold answer by rules (not judged)."""
        return self.value not in _JUDGED


# Two facts of each type that the data model needs itself; the kinds (kaoshi.qtypes), built on this module,
# state the same and are refused when they do not agree (kaoshi.qtypes.registry.register).
_SHOWS_OPTIONS = frozenset({"single", "multi"})  # multi_question keeps its options inside the text
_JUDGED = frozenset({"open"})  # graded by an LLM judge, not by rules


_TYPE_ALIASES: dict[str, QuestionType] = {
    "single": QuestionType.SINGLE,
    "单选题": QuestionType.SINGLE,
    "单选": QuestionType.SINGLE,
    "multi": QuestionType.MULTI,
    "multiple": QuestionType.MULTI,
    "多选题": QuestionType.MULTI,
    "多选": QuestionType.MULTI,
    "judge": QuestionType.TRUE_FALSE,
    "true_false": QuestionType.TRUE_FALSE,
    "判断题": QuestionType.TRUE_FALSE,
    "判断": QuestionType.TRUE_FALSE,
    "open": QuestionType.OPEN,
    "subjective": QuestionType.OPEN,
    "主观题": QuestionType.OPEN,
    "简答题": QuestionType.OPEN,
    "cloze": QuestionType.CLOZE,
    "fill_in_the_blank": QuestionType.CLOZE,
    "填空题": QuestionType.CLOZE,
    "填空": QuestionType.CLOZE,
    "multi_question": QuestionType.MULTI_QUESTION,
    "multi_question_choice": QuestionType.MULTI_QUESTION,
    "组合选择题": QuestionType.MULTI_QUESTION,
}


def parse_question_type(value: str) -> QuestionType:
    """Map an English or Chinese type name to a QuestionType; raise ValueError naming the accepted ones."""
    key = value.strip().lower()
    if key in _TYPE_ALIASES:
        return _TYPE_ALIASES[key]
    accepted = (
        "single, multi, judge, open, cloze, multi_question (or 单选题, 多选题, 判断题, 主观题, 填空题, "
        "组合选择题)"
    )
    raise InputError(f"unknown question type {value!r} (accepted: {accepted})")


@dataclass(frozen=True)
class Source:
    """Where a question came from, for error messages and traceability."""

    file: str
    line: int


@dataclass(frozen=True, repr=False)
class Question:
    id: str
    type: QuestionType
    stem: str
    options: tuple[tuple[str, str], ...] = ()  # ordered (letter, text)
    answer: Gold = None
    explanation: str = ""
    points: float = 1.0
    subject: str | None = None
    domain: str | None = None
    category: str | None = None
    split: str | None = None
    group: str | None = None  # a set of subjects reported together (LHMKE: school / college / career)
    # After shuffling: the original letter of each option, in the order shown (("C", "A", "D", "B"):
    # option A was C). Empty for questions never shuffled.
    original_letters: tuple[str, ...] = ()
    source: Source | None = field(default=None, compare=False)
    # The row's text fields exactly as read (no stripping, options still inside QualBench's question), for
    # templates that reproduce an official prompt byte for byte. Not content: the parsed fields are.
    verbatim: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        answer = _canonical_gold(self)
        if answer is not self.answer:
            object.__setattr__(self, "answer", answer)

    def __repr__(self) -> str:
        # The dataclass's repr, each value bounded: a stem (and its verbatim copy) may be pages long.
        shown = ", ".join(f"{f.name}={_SHORT_REPR.repr(getattr(self, f.name))}" for f in fields(self))
        return f"Question({shown})"

    def verbatim_field(self, name: str) -> str | None:
        """A field as the data file has it, or None when the loader kept none (or the question was
        changed since, e.g. its options shuffled)."""
        return dict(self.verbatim).get(name)

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(letter for letter, _ in self.options)

    @property
    def option_map(self) -> dict[str, str]:
        return dict(self.options)

    @property
    def has_answer(self) -> bool:
        return self.answer is not None

    def content(self) -> dict[str, Any]:
        """Canonical JSON-ready content; the source location is not content."""
        content: dict[str, Any] = {
            "id": self.id,
            "type": self.type.value,
            "stem": self.stem,
            "options": [list(pair) for pair in self.options],
            "answer": gold_to_json(self.answer),
            "explanation": self.explanation,
            "points": self.points,
            "subject": self.subject,
            "domain": self.domain,
            "category": self.category,
            "split": self.split,
        }
        if self.group is not None:  # only when set, so exams without groups keep their fingerprints
            content["group"] = self.group
        if self.original_letters:  # likewise only when shuffled
            content["original_letters"] = list(self.original_letters)
        return content

    def fingerprint(self) -> str:
        return _sha256(self.content())

    @classmethod
    def from_content(cls, content: dict[str, Any]) -> Question:
        """The inverse of `content()`: a question rebuilt from what the store keeps."""
        return cls(
            id=content["id"],
            type=QuestionType(content["type"]),
            stem=content["stem"],
            options=tuple((letter, text) for letter, text in content["options"]),
            answer=gold_from_json(content["answer"]),
            explanation=content["explanation"],
            points=content["points"],
            subject=content["subject"],
            domain=content["domain"],
            category=content["category"],
            split=content["split"],
            group=content.get("group"),
            original_letters=tuple(content.get("original_letters", ())),
        )


_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _canonical_gold(question: Question) -> Gold:
    """The question's gold answer in the form its grader compares: option letters as a frozenset, a
    true/false answer as a bool, a reference as text. A question built the way a plugin may write it
    (`answer="B"`, `"b"`, `["B"]`, `"A,C"`, `"正确"`) is read as its loader would read the file; a value
    of the wrong kind, or letters no option has, is an InputError naming the question. The forms the
    built-in loaders and the store give pass through untouched."""
    answer, kind = question.answer, question.type
    if answer is None:
        return None
    try:
        if kind in (QuestionType.SINGLE, QuestionType.MULTI):
            if isinstance(answer, frozenset) and all(letter in _LETTERS for letter in answer):
                return answer  # as loaders and the store give it (a letter no option has is kept there)
            if isinstance(answer, bool) or not isinstance(answer, (str, list, tuple, set, frozenset)):
                raise FieldError("answer", f"expected option letters, got {type(answer).__name__} {answer!r}")
            written = sorted(answer) if isinstance(answer, (set, frozenset)) else answer
            letters = parse_option_letters(
                list(written) if not isinstance(written, str) else written,
                exactly_one=kind is QuestionType.SINGLE,
            )
            if question.options:
                require_among_options(letters, question.options, answer)
            return letters
        if kind is QuestionType.TRUE_FALSE:
            return answer if isinstance(answer, bool) else parse_judge_answer(answer)
        if not isinstance(answer, str):
            raise FieldError(
                "answer", f"a {kind.value} question's answer is text, got {type(answer).__name__}"
            )
    except FieldError as exc:
        raise InputError(f"question {question.id!r} ({kind.value}): {exc.reason}") from None
    return answer


def exam_fingerprint(question_fingerprints: Iterable[str]) -> str:
    """Exam.fingerprint of questions with these fingerprints (Question.fingerprint), in any order."""
    return hashlib.sha256("\n".join(sorted(question_fingerprints)).encode()).hexdigest()


def gold_to_json(gold: Gold) -> Any:
    """JSON form of a gold answer: letters as a sorted string list, bools and text as themselves."""
    if isinstance(gold, frozenset):
        return sorted(gold)
    return gold


def gold_from_json(value: Any) -> Gold:
    if isinstance(value, list):
        return frozenset(str(v) for v in value)
    if value is None or isinstance(value, (bool, str)):
        return value
    raise TypeError(f"not a stored gold answer: {value!r}")


def format_gold(gold: Gold) -> str:
    """Human form: 'ABD', '正确'/'错误', the reference text, or '' when unknown."""
    if isinstance(gold, frozenset):
        return "".join(sorted(gold))
    if isinstance(gold, bool):
        return "正确" if gold else "错误"
    return gold or ""


# How a multiple-choice answer earns points: kaoshi.scoring.grade.MultiPolicy's values, named here because
# the data layer sits below scoring (tests/unit/test_exam_settings.py keeps the two the same).
MultiPolicyName = Literal["exact", "partial", "f1"]
MULTI_POLICY_NAMES: tuple[str, ...] = get_args(MultiPolicyName)


@dataclass(frozen=True)
class ExamSettings:
    """How the exam's own protocol scores a run, as its loader sets them (GAOKAO-Bench: partial credit
    and each subject's full marks; a kaoshi JSONL file: its header's multi_policy and standard_scores). A
    run's options override each one (--multi-policy, --standard-score) and the run spec records what was
    used. Checked when built: an InputError names the bad value."""

    multi_policy: MultiPolicyName = "exact"
    # subject -> the standard score its points are scaled to (数学 -> 150)
    standard_scores: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.multi_policy not in MULTI_POLICY_NAMES:
            raise InputError(
                f"unknown multi policy {self.multi_policy!r} (known: {', '.join(MULTI_POLICY_NAMES)})"
            )
        if not isinstance(self.standard_scores, Mapping):
            raise InputError(f"standard_scores must map subject -> score, got {self.standard_scores!r}")
        for subject, score in self.standard_scores.items():
            if not isinstance(subject, str):
                raise InputError(f"standard_scores: a subject must be text, got {subject!r}")
            if not _is_positive_number(score):
                raise InputError(f"standard_scores: {subject!r} must be a positive number, got {score!r}")
        # a copy: the caller's dict changing later cannot change the exam's settings
        object.__setattr__(self, "standard_scores", dict(self.standard_scores))


def _is_positive_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value) and value > 0
    except OverflowError:  # an integer too large for a float
        return False


@dataclass(frozen=True, repr=False)
class Exam:
    """The questions under evaluation, an optional few-shot pool (dev split), metadata describing where
    they came from (benchmark, path, split, how they were loaded) and the settings its protocol scores
    with. Its repr is a summary (name, counts of questions by type, subjects, splits), not every question."""

    name: str
    questions: tuple[Question, ...]
    fewshot: tuple[Question, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    settings: ExamSettings = field(default_factory=ExamSettings)

    def __len__(self) -> int:
        return len(self.questions)

    def __repr__(self) -> str:
        # A summary, not every question: e.g. Exam('cmmlu', 11582 questions: 11582 single; 67 subjects;
        # split test; 335 few-shot).
        parts = []
        types = Counter(q.type.value for q in self.questions)
        if types:
            parts.append(", ".join(f"{n} {kind}" for kind, n in types.most_common()))
        subjects = {q.subject for q in self.questions if q.subject is not None}
        if subjects:
            parts.append(_count(len(subjects), "subject"))
        splits = sorted({q.split for q in self.questions if q.split is not None})
        if 0 < len(splits) <= 3:
            named = ", ".join(_SHORT_REPR.repr(split)[1:-1] for split in splits)
            parts.append(f"split{'s' if len(splits) > 1 else ''} {named}")
        elif splits:
            parts.append(_count(len(splits), "split"))
        if self.fewshot:
            parts.append(f"{len(self.fewshot)} few-shot")
        summary = "".join(f"{': ' if i == 0 else '; '}{part}" for i, part in enumerate(parts))
        return f"Exam({_SHORT_REPR.repr(self.name)}, {_count(len(self.questions), 'question')}{summary})"

    @property
    def fingerprint(self) -> str:
        """Stable content hash of the evaluated questions, independent of order and file location."""
        return exam_fingerprint(q.fingerprint() for q in self.questions)

    @cached_property
    def _by_id(self) -> dict[str, Question]:
        # Evaluated questions win over a few-shot question with the same id (C-Eval reuses ids per split).
        index = {q.id: q for q in self.fewshot}
        index.update((q.id, q) for q in self.questions)
        return index

    def question(self, question_id: str) -> Question:
        try:
            return self._by_id[question_id]
        except KeyError:
            raise UnknownName(f"no question {question_id!r} in exam {self.name!r}") from None

    def limited(self, limit: int | None = None, *, per_subject: int | None = None) -> Exam:
        """The first `per_subject` questions of each subject (`limit_subject`), then the first `limit` of
        those in all; the questions keep the exam's order (`kaoshi run --limit` / `--limit-total`)."""
        questions = self.questions
        if per_subject is not None:
            taken: Counter[str | None] = Counter()
            kept: list[Question] = []
            for question in questions:
                subject = limit_subject(question)
                if taken[subject] < per_subject:
                    taken[subject] += 1
                    kept.append(question)
            questions = tuple(kept)
        if limit is not None:
            questions = questions[:limit]
        if len(questions) == len(self.questions):
            return self
        return replace(self, questions=questions)


def limit_subject(question: Question) -> str | None:
    """The subject `--limit N` takes N questions of: the question's subject (C-Eval, CMMLU, GAOKAO-Bench,
    ...), else its domain (QualBench has only domains); None for a question with neither, and those
    questions count as one group."""
    return question.subject or question.domain


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _short_repr() -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxstring = 80  # a longer text is shown as its head ... tail
    short.maxother = 200  # a value of another type (enum, Source), cut in the middle past that
    short.maxtuple = short.maxfrozenset = short.maxdict = 26  # every option, every verbatim cell
    short.maxlevel = 4
    return short


_SHORT_REPR = _short_repr()


def _sha256(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
