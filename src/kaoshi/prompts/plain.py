"""kaoshi's plain template: instruction, solved exemplars of the same type, the question, '答案：'.

The instruction is the question type's own (`Wording.plain`, kaoshi.qtypes).
"""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.data.model import Exam, Question, format_gold
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Prompt, RenderOptions, with_system
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars
from kaoshi.qtypes import kind_of

# Completion prompts separate instruction, exemplars and question with a blank line.
BLOCK_SEPARATOR = "\n\n"


def format_body(question: Question, separator: str = ". ") -> str:
    lines = [question.stem]
    lines.extend(f"{letter}{separator}{text}" for letter, text in question.options)
    return "\n".join(lines)


@dataclass(frozen=True)
class PlainTemplate:
    name: str = "default"
    version: int = 1
    default_shots: int = 0
    # Room for a chat model's short reason before or after its answer; open answers need paragraphs.
    budget: GenerationBudget = DEFAULT_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        pool = exemplar_pool(exam, options.exemplar_ids) if options.exemplar_ids else exam.fewshot
        exemplars = pick_exemplars(question, pool, options.shots)
        instruction = with_system(options.system, kind_of(question.type).wording.plain)
        if options.chat:
            messages = [("system", instruction)]
            for exemplar in exemplars:
                messages += [
                    ("user", f"{format_body(exemplar)}\n答案："),
                    ("assistant", format_gold(exemplar.answer)),
                ]
            messages.append(("user", f"{format_body(question)}\n答案："))
            return Prompt.chat(messages, len(exemplars))
        parts = [instruction]
        parts += [f"{format_body(e)}\n答案：{format_gold(e.answer)}" for e in exemplars]
        parts.append(f"{format_body(question)}\n答案：")
        return Prompt(BLOCK_SEPARATOR.join(parts), len(exemplars))

    def answer_end(self, chat: bool) -> str | None:
        # An exemplar's answer ends its block (completion) or its assistant turn (chat).
        return None if chat else BLOCK_SEPARATOR
