"""CMMLU's prompts as its official code builds them (`src/mp_utils.py`, gen_prompt and format_example),
answer-only and chain-of-thought, zero- and few-shot.

    header = "以下是关于{科目}的单项选择题，请直接给出正确答案的选项。\\n\\n"   ({科目}: name_en2zh's name)
             (CoT: "以下是关于{科目}的单项选择题，请分析并选出正确答案。\\n\\n")
    item   = "题目：" + question + "\\nA. " + A + "\\nB. " + B + "\\nC. " + C + "\\nD. " + D   (cells as read)

Completion: header, then per dev exemplar of the subject (file order)
item + "\\n答案是：" + answer + "\\n\\n", then item(test) + "\\n答案是：". CoT: the test item ends
"\\n逐步分析并给出答案选项。" instead; its exemplars keep the answer-only form, as the official code
writes them.
Chat: the official code for chat models (`src/chatgpt.py`) sends that same text as one user message, and so
does this template. Not official: a `--system` prompt (kaoshi's), which goes first (completion: the line
before the header; chat: a system message).
Too long a prompt loses exemplars as in the official code: the longest first, every exemplar of that
length at once, until the prompt fits. Not reproduced there: the official code measures in the model's
tokens against a fixed `--max_length` (2,048; 4,096 for its API scripts), kaoshi measures an exemplar in
characters (a template has no tokenizer) and fits the prompt and the answer budget into the model's
window; where even the zero-shot prompt is too long, the official code drops the header, kaoshi keeps it
(the model then reports the question too long).
Not reproduced either: pandas reads the official cells, so an all-number column shows '0.5' for '0.50' and
an empty cell 'nan' (the cells are used as the file has them; no published row is affected).
"""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.benchmarks.cmmlu.subjects import CMMLU_SUBJECTS
from kaoshi.benchmarks.common.ceval_prompts import ceval_body
from kaoshi.data.model import Exam, Question
from kaoshi.prompts.base import Fits, GenerationBudget, Message, Prompt, RenderOptions, with_system
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars, stored_answer
from kaoshi.prompts.plain import BLOCK_SEPARATOR

# Protocol facts (src/mp_utils.py): reproduced byte for byte.
ITEM_START = "题目："
ANSWER_CUE = "\n答案是："
COT_CUE = "\n逐步分析并给出答案选项。"
# Answer-only asks for the letter: a short budget leaves a chat model room for '答案是 B。' and a clause.
ANSWER_ONLY_BUDGET = GenerationBudget(objective=32, open=512)


def cmmlu_subject_name(question: Question) -> str:
    subject = question.subject or ""
    return CMMLU_SUBJECTS[subject].chinese if subject in CMMLU_SUBJECTS else subject


def solved_item(exemplar: Question) -> str:
    """A dev exemplar with its answer and the blank line after it (answer-only in both forms: the official
    CoT prompt keeps its exemplars so)."""
    return f"{ITEM_START}{ceval_body(exemplar)}{ANSWER_CUE}{stored_answer(exemplar)}{BLOCK_SEPARATOR}"


def cmmlu_header(question: Question, cot: bool) -> str:
    name = cmmlu_subject_name(question)
    if cot:
        return f"以下是关于{name}的单项选择题，请分析并选出正确答案。"
    return f"以下是关于{name}的单项选择题，请直接给出正确答案的选项。"


@dataclass(frozen=True)
class CmmluTemplate:
    name: str
    cot: bool
    version: int = 2  # v1 dropped the last exemplars (not the longest) from too long a prompt
    default_shots: int = 5
    budget: GenerationBudget = ANSWER_ONLY_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        return self._prompt(question, self._exemplars(question, exam, options), options)

    def render_within(self, question: Question, exam: Exam, options: RenderOptions, fits: Fits) -> Prompt:
        """The prompt with as many exemplars as fit, dropped as gen_prompt drops them: the longest first,
        all exemplars of that length at once."""
        exemplars = self._exemplars(question, exam, options)
        while True:
            prompt = self._prompt(question, exemplars, options)
            if not exemplars or fits(prompt):
                return prompt
            longest = max(len(solved_item(e)) for e in exemplars)
            exemplars = [e for e in exemplars if len(solved_item(e)) != longest]

    def _exemplars(self, question: Question, exam: Exam, options: RenderOptions) -> list[Question]:
        pool = exemplar_pool(exam, options.exemplar_ids) if options.exemplar_ids else exam.fewshot
        return pick_exemplars(question, pool, options.shots, same_subject_only=True)

    def _prompt(self, question: Question, exemplars: list[Question], options: RenderOptions) -> Prompt:
        solved = "".join(solved_item(e) for e in exemplars)
        text = (
            f"{cmmlu_header(question, self.cot)}{BLOCK_SEPARATOR}{solved}{ITEM_START}{ceval_body(question)}"
        )
        text += COT_CUE if self.cot else ANSWER_CUE
        if not options.chat:
            return Prompt(with_system(options.system, text), len(exemplars))
        messages: list[Message] = [("system", options.system)] if options.system else []
        messages.append(("user", text))
        return Prompt.chat(messages, len(exemplars))

    def answer_end(self, chat: bool) -> str | None:
        # The same in both forms: the exemplars sit in the one text (chat: the one user message), each
        # answer followed by the blank line that ends its block.
        return BLOCK_SEPARATOR


CMMLU_ANSWER_ONLY = CmmluTemplate("cmmlu", cot=False)
# CoT writes its analysis first and needs room for it.
CMMLU_COT = CmmluTemplate("cmmlu-cot", cot=True, budget=GenerationBudget(objective=1024, open=1024))
