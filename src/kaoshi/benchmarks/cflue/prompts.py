"""`cflue-kaoshi`: CFLUE's knowledge questions in kaoshi's own words, asking for CFLUE's answer line and
explanation line, with exemplars:

    答案：AC
    解析：…

The wording is kaoshi's (it was the `cflue` template's v1); CFLUE's own prompt, as its repository's code
sends it, is `cflue` (official_prompt.py). The task (单项选择题 / 多项选择题 / 判断题) is the
question's domain, as the CFLUE loader keeps it; 判断题 are answered with a letter (A 对, B 错), as CFLUE's
answers are.

Completion: instruction, solved exemplars of the same task (`{question}\\n答案：X\\n解析：…`), then the
question and `答案：`. Chat: the instruction as the system message, each exemplar as a user turn and an
assistant reply of the two lines, then the question.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kaoshi.benchmarks.cflue.loader import JUDGE_TASK
from kaoshi.data.model import Exam, Question, QuestionType, format_gold
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Message, Prompt, RenderOptions, with_system
from kaoshi.prompts.exemplars import exemplar_pool
from kaoshi.prompts.plain import BLOCK_SEPARATOR, format_body

ANSWER_CUE = "答案："
EXPLANATION_LEAD = "\n解析："
# What each task asks for on the answer line, and what a single-choice question is called without a task.
_ASKS = {
    "单项选择题": "请选出唯一正确的选项",
    "多项选择题": "请选出所有正确的选项",
    JUDGE_TASK: "请判断题目中的说法是否正确，A 表示对，B 表示错",
}
_ANSWER_LINE = {
    "单项选择题": "答案：正确选项的字母",
    "多项选择题": "答案：所有正确选项的字母",
    JUDGE_TASK: "答案：A 或 B",
}
_TASK_OF_TYPE = {QuestionType.SINGLE: "单项选择题", QuestionType.MULTI: "多项选择题"}


def cflue_task(question: Question) -> str:
    """The question's CFLUE task: its domain as loaded, else the task of its type."""
    if question.domain in _ASKS:
        return question.domain
    return _TASK_OF_TYPE.get(question.type, "单项选择题")


def cflue_instruction(question: Question) -> str:
    task = cflue_task(question)
    exam = f"“{question.subject}”考试" if question.subject else "金融资格考试"
    return (
        f"以下是{exam}的{task}，{_ASKS[task]}。请按以下格式作答，先给出答案，再给出解析：\n"
        f"{_ANSWER_LINE[task]}\n解析：简要说明理由"
    )


def _solution(exemplar: Question) -> str:
    """An exemplar's reply: the answer line, then its analysis where it has one."""
    reply = f"{ANSWER_CUE}{format_gold(exemplar.answer)}"
    if exemplar.explanation.strip():
        reply += f"{EXPLANATION_LEAD}{exemplar.explanation.strip()}"
    return reply


def pick_same_task(question: Question, pool: Iterable[Question], shots: int) -> list[Question]:
    """The first `shots` solved pool questions of the same task (a 判断题 is no exemplar for a 单项选择题,
    though both are single choice), same exam first; never the question itself. Stops as soon as enough
    of the same exam are found, since the pool may be the whole exam."""
    if shots <= 0:
        return []
    task = cflue_task(question)
    same_exam: list[Question] = []
    other_exam: list[Question] = []
    for candidate in pool:
        if candidate.type is not question.type or cflue_task(candidate) != task or not candidate.has_answer:
            continue
        if (candidate.id, candidate.split) == (question.id, question.split):
            continue
        chosen = same_exam if candidate.subject == question.subject else other_exam
        if len(chosen) < shots:
            chosen.append(candidate)
        if len(same_exam) == shots:
            break
    return (same_exam + other_exam)[:shots]


@dataclass(frozen=True)
class CflueTemplate:
    name: str = "cflue-kaoshi"
    version: int = 1
    default_shots: int = 0
    budget: GenerationBudget = DEFAULT_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        pool = exemplar_pool(exam, options.exemplar_ids)
        exemplars = pick_same_task(question, pool, options.shots)
        instruction = with_system(options.system, cflue_instruction(question))
        if options.chat:
            messages: list[Message] = [("system", instruction)]
            for exemplar in exemplars:
                messages += [("user", format_body(exemplar)), ("assistant", _solution(exemplar))]
            messages.append(("user", format_body(question)))
            return Prompt.chat(messages, len(exemplars))
        blocks = [instruction]
        blocks += [f"{format_body(e)}\n{_solution(e)}" for e in exemplars]
        blocks.append(f"{format_body(question)}\n{ANSWER_CUE}")
        return Prompt(BLOCK_SEPARATOR.join(blocks), len(exemplars))

    def answer_end(self, chat: bool) -> str | None:
        # The answer line is followed by the explanation line, in both forms.
        return EXPLANATION_LEAD


CFLUE_KAOSHI = CflueTemplate()
