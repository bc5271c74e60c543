"""The QualBench prompt exactly as the authors' script builds it (`qualbench`, `qualbench-expert`).

    INSTRUCTION[type] + "\\n" + "题目：" + demo question + "\\n" + "答案：" + demo answer + "\\n"
      + "解析：" + demo explanation + "\\n\\n" + "题目：" + question + "\\n" + "答案："

Questions are used exactly as the data file stores them (options inside the question text). The demo is
one fixed solved question per type, a row of QualBench itself found by the start of its stem; where the
loaded data lacks it, the first question of that type is used and a note says which. Chat models get the
same text as one user message. kaoshi's own wording stays available as `qualbench-kaoshi`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.prompts.base import EXAM_BUDGET, GenerationBudget, Message, Prompt, RenderOptions
from kaoshi.prompts.exam_style import OPTION_SEPARATOR
from kaoshi.prompts.exemplars import stored_answer, stored_explanation
from kaoshi.prompts.plain import format_body
from kaoshi.qtypes import kind_of

# Protocol facts (the authors' src/test_QualBench.py): reproduced byte for byte.
PAPER_INSTRUCTIONS = {
    QuestionType.SINGLE: "这是一道单选题，请给出你的答案（只需给出单个选项），并进行解析，给出你的理由。",
    QuestionType.MULTI: "这是一道多选题，请给出你的答案（只需给出选项），并进行解析，给出你的理由。",
    QuestionType.TRUE_FALSE: (
        "这是一道判断题，请给出你的答案（只需给出“正确”或“错误”），并进行解析，给出你的理由。"
    ),
}
PAPER_TYPE_NAMES = {
    QuestionType.SINGLE: "单选题",
    QuestionType.MULTI: "多选题",
    QuestionType.TRUE_FALSE: "判断题",
}
# The prompt study's expert persona (src/example/test_prompt.py) replaces the instruction line.
PAPER_EXPERT = (
    "你是一位中国专业领域的资深顾问，精通中国大陆的法律法规、国家标准、文化规范和专业实践。这是一道{type}，"
    "请根据中国职业资格考试的要求，提供最符合中国大陆专业背景的答案。在解析中，明确引用相关的中国法律法规、"
    "国家标准或行业规范，详细说明你的推理过程，确保答案和解析严格遵循中国大陆的专业标准和文化背景。"
)
# The start of each fixed demo's stem, to find the demo rows in the loaded data.
DEMO_STEMS = {
    QuestionType.SINGLE: "酸碱灭火器是一种内部装有65％的工业硫酸和碳酸氢钠的水溶液作灭火剂的灭火器",
    QuestionType.MULTI: "关于运行速度的说法，正确的有下列哪些选项？",
    QuestionType.TRUE_FALSE: "基本建设投资和更新改造投资的综合范围为总投资50万元以上",
}
ANSWER_LEAD = "答案："
EXPLANATION_LEAD = "解析："


def stored_question(question: Question) -> str:
    """The question text as the data file stores it; rebuilt QualBench-style where the loader kept none."""
    return question.verbatim_field("question") or format_body(question, OPTION_SEPARATOR)


@dataclass(frozen=True)
class Demos:
    """The demo per question type and notes on any that had to be replaced."""

    by_type: dict[QuestionType, Question]
    notes: tuple[str, ...]


def find_demos(pool: Iterable[Question]) -> Demos:
    """The authors' demo of each type, found by its stem; else the first solved question of that type."""
    found: dict[QuestionType, Question] = {}
    first: dict[QuestionType, Question] = {}
    for question in pool:
        if question.type not in DEMO_STEMS or not question.has_answer:
            continue
        first.setdefault(question.type, question)
        text = question.verbatim_field("question") or question.stem
        if question.type not in found and text.lstrip().startswith(DEMO_STEMS[question.type]):
            found[question.type] = question
    notes = []
    for qtype, fallback in first.items():
        if qtype not in found:
            found[qtype] = fallback
            notes.append(
                f"the QualBench demo {PAPER_TYPE_NAMES[qtype]} (stem starting "
                f"{DEMO_STEMS[qtype][:12]!r}…) is not in the loaded data; using question {fallback.id!r} "
                "instead (the first of its type)"
            )
    return Demos(found, tuple(notes))


@dataclass(frozen=True)
class QualbenchPaperTemplate:
    name: str
    expert: bool = False
    version: int = 2  # v1 of these names was kaoshi's own wording, now `qualbench-kaoshi`
    default_shots: int = 1
    budget: GenerationBudget = EXAM_BUDGET

    def instruction(self, question: Question) -> str:
        """The authors' line for the question's type; kaoshi's QualBench-style wording for a type the
        authors wrote none for (QualBench has no open questions)."""
        if question.type not in PAPER_INSTRUCTIONS:
            return kind_of(question.type).wording.exam_style
        if self.expert:
            return PAPER_EXPERT.format(type=PAPER_TYPE_NAMES[question.type])
        return PAPER_INSTRUCTIONS[question.type]

    def demo_pool(self, exam: Exam, options: RenderOptions) -> Sequence[Question]:
        """Where the demo is looked for: pinned exemplars, else the few-shot pool (a dev split, an
        --exemplars-file), else the exam itself (QualBench has one split)."""
        if options.exemplar_ids:
            return [exam.question(i) for i in options.exemplar_ids]
        return exam.fewshot or exam.questions

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        parts = [f"{options.system}\n" if options.system and not options.chat else ""]
        parts.append(f"{self.instruction(question)}\n")
        demo = None
        if options.shots > 0:
            demo = find_demos(self.demo_pool(exam, options)).by_type.get(question.type)
        if demo is not None:
            parts.append(
                f"题目：{stored_question(demo)}\n{ANSWER_LEAD}{stored_answer(demo)}\n"
                f"{EXPLANATION_LEAD}{stored_explanation(demo)}\n\n"
            )
        parts.append(f"题目：{stored_question(question)}\n{ANSWER_LEAD}")
        text = "".join(parts)
        shots = 0 if demo is None else 1
        if options.chat:
            messages: list[Message] = [("system", options.system)] if options.system else []
            messages.append(("user", text))
            return Prompt.chat(messages, shots)
        return Prompt(text, shots)

    def answer_end(self, chat: bool) -> str | None:
        # The demo's answer is followed by a newline and its explanation, in both forms.
        return f"\n{EXPLANATION_LEAD}"

    def prepare(self, exam: Exam, pinned: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The demo ids to pin for a whole run (found once, recorded in the run spec) and notes to show."""
        if pinned:
            return pinned, ()
        demos = find_demos(exam.fewshot or exam.questions)
        if exam.fewshot:  # a small pool, searched per question; its ids may repeat the exam's
            return (), demos.notes
        return tuple(q.id for q in demos.by_type.values()), demos.notes


QUALBENCH_PAPER = QualbenchPaperTemplate("qualbench")
QUALBENCH_PAPER_EXPERT = QualbenchPaperTemplate("qualbench-expert", expert=True)
