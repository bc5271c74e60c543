"""What a question type is made of: its wording, how log-likelihood ranks its answers, how an answer is
read from a reply and graded, how its gold answer is parsed, and what fine-tuning teaches.

A kind imports answer extraction (kaoshi.scoring.extract, whose patterns take a few milliseconds to
build) where it reads an answer, not as it is imported: what reads stored results (`kaoshi report`, the
viewer) asks a kind what it is (objective or not), never to read a reply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kaoshi.data.model import Gold, Question
from kaoshi.scoring.grade import Grade, GradingPolicy

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction

# (question, the model's reply, the prompt when it may be echoed) -> the answer read and its status
Extractor = Callable[[Question, str, str | None], "Extraction"]
# (question, the answer read, the run's grading policy) -> correct and points
Grader = Callable[[Question, Gold, GradingPolicy], Grade]
# a gold answer as a data file writes it -> the gold answer (FieldError when it is not one)
GoldParser = Callable[[object], Gold]
# (question, with its explanation) -> what fine-tuning teaches the model to write after the answer cue
TargetWriter = Callable[[Question, bool], str]


@dataclass(frozen=True)
class Wording:
    """kaoshi's own words for a type; a benchmark's protocol keeps its authors' words in its template."""

    name_zh: str  # 单选题: user templates' `type_zh`
    plain: str  # the `default` template's instruction
    exam_style: str  # `qualbench-kaoshi` and `lhmke`'s; `qualbench`'s where the authors wrote none
    extractor: str | None  # what the LLM extractor is told to output; None: it reads no answer of this type


@dataclass(frozen=True)
class Ranking:
    """How log-likelihood answers a question: the answer strings it ranks and the answer each stands for.

    with_answer_end: candidates can be prefixes of one another ('AB', 'ABCD'), so each is scored with the
    text that ends an answer in the prompt's format; otherwise they are scored bare (C-Eval's official
    code and lm-evaluation-harness do), so their numbers stay comparable.
    """

    candidates: Callable[[Question], tuple[str, ...]]
    answer_of: Callable[[Question, str], Gold]
    with_answer_end: bool = False


@dataclass(frozen=True)
class QuestionKind:
    """Everything kaoshi does differently per question type; `name` is the type as stored ("single")."""

    name: str
    wording: Wording
    objective: bool  # answers are checked against the gold answer by rules (else an LLM judge grades them)
    has_options: bool  # questions show lettered options (shuffling permutes them)
    ranking: Ranking | None  # None: answers are generated even in a log-likelihood run
    extract: Extractor
    grade: Grader
    parse_gold: GoldParser
    target: TargetWriter
