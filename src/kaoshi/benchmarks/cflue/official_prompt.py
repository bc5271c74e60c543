"""`cflue`: CFLUE's knowledge prompt as the CFLUE repository's evaluation code sends it (v2; v1 of this
name was kaoshi's own wording, now `cflue-kaoshi`).

Read from aliyun/cflue at commit ba87d12cd42ca60a8b1288a5471543f865d3fb13 (unchanged at ff28c38, where
tests/realdata/test_cflue_real.py runs that code on every knowledge row):
- `utils/format_example.py`: `format_one_example` and `format_multi_example`, the two prompt texts;
- `exec_knowledge_eval.py`: a record whose `task` is 多项选择题 gets the multi-choice text, every other
  record (单项选择题 and 判断题) the single-choice text; each is sent zero-shot as
  `model.chat(tokenizer, prompt, history=None)`, one user turn.

    "假设你是一位金融行业专家，请回答下列问题。\\n"
    "注意：题目是单选题，只需要返回一个最合适的选项，若有多个合适的答案，只返回最准确的即可。\\n"
    "注意：结果只输出两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，"
    "第二行进行简要的解析，输出格式限制为：“答案：”，“解析：”。\\n\\n{question}\\n{choices}"
    multi, lines 2-3: "注意：题目是多选题，可能存在多个正确的答案。\\n注意：结果只输出两行，第一行只需要返回
    答案的英文选项，第二行进行简要的解释。输出格式限制为：“答案：”，“解析：”。"
    choices = "\\n".join(f"{key}. {value}") over the record's `choices` dict, in the literal's order

The question and choices are the record's own (Question.verbatim: `question` as read, the `choices`
literal's keys and values in its order and unstripped); a question that kept none (another benchmark's,
shuffled options, a 判断题 without choices, which their code cannot load) uses kaoshi's stem and options.

Chat: the text as the one user message. Not CFLUE's (kaoshi's, UNVERIFIED as a protocol): completion form
(their code only chats; here it is the same text, nothing appended), a `--system` prompt (a system message;
completion: the line before the text), and the budget (kaoshi's default; their code generates greedily
with the checkpoint's own generation config). Zero-shot only, as their code is: `--shots` is ignored
(samples record 0). `cflue-kaoshi` has exemplars and ends with an answer cue, the better choice for base
models and log-likelihood. Their answer reading (`utils/extract_choice.py` at 5652652: the first
`答案[是：:]+([ABCDEF]+)`, else letters at the start) is not reproduced; kaoshi's extraction reads the same
lines (the replies the two grade apart are listed in tests/realdata/test_cflue_real.py).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kaoshi.benchmarks.cflue.loader import parse_literal
from kaoshi.benchmarks.cflue.prompts import EXPLANATION_LEAD, cflue_task
from kaoshi.data.model import Exam, Question
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Prompt, RenderOptions, one_message

# Protocol facts (utils/format_example.py): reproduced byte for byte.
EXPERT = "假设你是一位金融行业专家，请回答下列问题。\n"
SINGLE_RULES = (
    "注意：题目是单选题，只需要返回一个最合适的选项，若有多个合适的答案，只返回最准确的即可。\n"
    "注意：结果只输出两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，"
    "第二行进行简要的解析，输出格式限制为：“答案：”，“解析：”。\n\n"
)
MULTI_RULES = (
    "注意：题目是多选题，可能存在多个正确的答案。\n"
    "注意：结果只输出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。"
    "输出格式限制为：“答案：”，“解析：”。\n\n"
)
MULTI_TASK = "多项选择题"


def written_choices(question: Question) -> tuple[tuple[str, str], ...]:
    """The choices as the record's dict literal has them (as `eval(choices).items()` gives them: its
    order, its keys, its text unstripped); the question's options where it kept no literal."""
    literal = (question.verbatim_field("choices") or "").strip()
    if literal:
        try:
            # The loader has checked the literal already; literal_eval evaluates nothing but literals.
            value = ast.literal_eval(parse_literal(literal).body)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            value = None
        if isinstance(value, dict) and value:
            return tuple((str(key), str(text)) for key, text in value.items())
    return question.options


def cflue_prompt(question: Question) -> str:
    """The text CFLUE's code sends for `question`."""
    rules = MULTI_RULES if cflue_task(question) == MULTI_TASK else SINGLE_RULES
    stem = question.verbatim_field("question")
    choices = "\n".join(f"{key}. {text}" for key, text in written_choices(question))
    return f"{EXPERT}{rules}{question.stem if stem is None else stem}\n{choices}"


@dataclass(frozen=True)
class CflueOfficialTemplate:
    name: str = "cflue"
    version: int = 2  # v1 of this name was kaoshi's own wording, now `cflue-kaoshi`
    default_shots: int = 0
    budget: GenerationBudget = DEFAULT_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        # Zero-shot: CFLUE's code sends no exemplars.
        return one_message(cflue_prompt(question), options)

    def answer_end(self, chat: bool) -> str | None:
        # The reply CFLUE asks for: the answer line, then the 解析 line, in both forms.
        return EXPLANATION_LEAD


CFLUE = CflueOfficialTemplate()
