"""Open questions (主观题): free text, graded against the reference answer by an LLM judge, not by rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.data.answers import parse_reference_answer
from kaoshi.data.model import Gold, Question, QuestionType, format_gold
from kaoshi.qtypes.kind import QuestionKind, Wording
from kaoshi.scoring.grade import UNGRADED, Grade, GradingPolicy

if TYPE_CHECKING:
    from kaoshi.scoring.extract import Extraction


def read_open(question: Question, text: str, prompt: str | None) -> Extraction:
    # Late import: the answer patterns load as a reply is first read (a report imports the types)
    from kaoshi.scoring.extract import extract_open, strip_echo, strip_reasoning  # see kaoshi.qtypes.kind

    # The answer keeps its own characters (no width folding): graders compare it with a reference text.
    return extract_open(strip_echo(strip_reasoning(text), prompt).strip())


def left_to_judges(question: Question, answer: Gold, policy: GradingPolicy) -> Grade:
    """No rule grades an open answer: `kaoshi judge` does."""
    return UNGRADED


def reference_answer(question: Question, with_explanation: bool) -> str:
    """The reference answer is the whole answer; an explanation would only repeat it."""
    return format_gold(question.answer)


OPEN_ANSWER = QuestionKind(
    name=QuestionType.OPEN.value,
    wording=Wording(
        name_zh="主观题",
        plain="以下是主观题，请给出完整的回答。",
        exam_style="请回答下面的主观题。在“答案：”后给出完整、准确的回答。",
        extractor=None,
    ),
    objective=False,
    has_options=False,
    ranking=None,
    extract=read_open,
    grade=left_to_judges,
    parse_gold=parse_reference_answer,
    target=reference_answer,
)
