"""kaoshi's own exam-paper prompt shape (`lhmke` here; `qualbench-kaoshi`, `-expert`, `qualbench-zero` in
kaoshi.benchmarks.qualbench.prompts): a type-specific instruction, solved exemplars of the same type
(题目 / 答案 / 解析), then '题目：…\\n答案：'. LHMKE's mixed exams ask open questions for a full answer.

The instruction wording is kaoshi's own, each question type's (`Wording.exam_style`, kaoshi.qtypes); the
authors' exact QualBench prompt is `qualbench` (kaoshi.benchmarks.qualbench.paper_prompt).
"""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.data.model import Exam, Question, format_gold
from kaoshi.prompts.base import (
    EXAM_BUDGET,
    GenerationBudget,
    Message,
    Prompt,
    RenderOptions,
    with_system,
)
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars
from kaoshi.prompts.plain import BLOCK_SEPARATOR, format_body
from kaoshi.qtypes import kind_of

EXPERT_PERSONA = (
    "你是一名资深顾问，精通中国大陆的法律法规、国家标准和行业执业规范。作答时请依据相关法规和标准。"
)
# QualBench writes options with a full-width separator, as in its data files.
OPTION_SEPARATOR = "．"
# What follows the answer: the instruction asks for '答案：…' then '解析：…', as the exemplars write it.
EXPLANATION_LEAD = "\n解析："


def _solved(exemplar: Question) -> tuple[str, str]:
    answer = format_gold(exemplar.answer)
    reply = f"答案：{answer}"
    if exemplar.explanation.strip():
        reply += f"{EXPLANATION_LEAD}{exemplar.explanation.strip()}"
    return f"题目：{format_body(exemplar, OPTION_SEPARATOR)}", reply


@dataclass(frozen=True)
class ExamStyleTemplate:
    name: str
    persona: bool = False
    version: int = 1
    default_shots: int = 1
    # The authors' budget, kept for kaoshi's wording so the two compare.
    budget: GenerationBudget = EXAM_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        exemplars = pick_exemplars(question, exemplar_pool(exam, options.exemplar_ids), options.shots)
        instruction = kind_of(question.type).wording.exam_style
        if self.persona:
            instruction = f"{EXPERT_PERSONA}\n{instruction}"
        instruction = with_system(options.system, instruction)
        asked = f"题目：{format_body(question, OPTION_SEPARATOR)}"
        if options.chat:
            messages: list[Message] = [("system", instruction)]
            for exemplar in exemplars:
                user, assistant = _solved(exemplar)
                messages += [("user", user), ("assistant", assistant)]
            messages.append(("user", asked))
            return Prompt.chat(messages, len(exemplars))
        blocks = [instruction]
        blocks += ["\n".join(_solved(e)) for e in exemplars]
        blocks.append(f"{asked}\n答案：")
        return Prompt(BLOCK_SEPARATOR.join(blocks), len(exemplars))

    def answer_end(self, chat: bool) -> str | None:
        # The same in both forms: the answer line is followed by the explanation (an exemplar without
        # one ends its block or turn instead; the instruction still asks for it).
        return EXPLANATION_LEAD


MIXED_EXAM = ExamStyleTemplate("lhmke", default_shots=0)
