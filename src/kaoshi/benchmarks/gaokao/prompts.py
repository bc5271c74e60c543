"""GAOKAO-Bench's zero-shot chain-of-thought protocol: the model writes `【解析】…<eoe>` and `【答案】…<eoa>`.

`gaokao`: as the repository's `Bench/bench_function.py` sends an item: the official instruction of its
data file (its `prefix_prompt` in `Bench/Obj_Prompt.json` / `Sub_Prompt.json`, read by the loader) and the
item's text (the question stripped and ended by a newline, for every type; a passage first where a file
writes one). Completion: instruction + text; chat: the instruction as the system turn and the text as the
user turn, as the bench's model class (`Models/openai_gpt4.py`) sends them. The correction item's first
request is this one; the bench's second (comparing two passages) is a step kaoshi does not run. A question
loaded without the prompt files cannot use it: the error says to pass the repository root or to use
`gaokao-kaoshi`.

`gaokao-kaoshi`: kaoshi's own instruction per question type, asking for the same two markers, for data
without the prompt files. Its wording is ours, not the authors'.

Both are generation protocols. A log-likelihood run ranks the letters right after the question; the
`default` template, which ends with an answer cue, is the better choice for one.
"""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.benchmarks.gaokao.subjects import GAOKAO_SUBJECTS
from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.errors import InputError
from kaoshi.prompts.base import GenerationBudget, Prompt, RenderOptions, with_system

# Worked solutions before the answer need room; an essay needs more.
GAOKAO_BUDGET = GenerationBudget(objective=1024, open=2048)

_FORMAT = (
    "请先逐步分析，把分析过程写在【解析】和<eoe>之间；再把最终答案写在【答案】和<eoa>之间。\n"
    "回答格式：\n【解析】……<eoe>\n【答案】……<eoa>\n"
)
_TASK = {
    QuestionType.SINGLE: "下面是一道{subject}单项选择题，只有一个选项正确，【答案】后写出该选项的字母。",
    QuestionType.MULTI: "下面是一道{subject}选择题，可能有多个选项正确，【答案】后写出所有正确选项的字母。",
    QuestionType.MULTI_QUESTION: (
        "下面的{subject}题目包含若干小题，每个小题只有一个选项正确。请按小题顺序作答，"
        "每个小题各写一组【解析】和【答案】，【答案】后写出该小题选项的字母。"
    ),
    QuestionType.OPEN: "下面是一道{subject}主观题，请写出完整的解答过程和答案。",
}


def question_text(question: Question) -> str:
    """The item's text as the bench sends it (options inside), else kaoshi's stem and options."""
    verbatim = question.verbatim_field("question")
    if verbatim is not None:
        return verbatim
    return "\n".join([question.stem, *(f"{letter}. {text}" for letter, text in question.options)]) + "\n"


def subject_name(question: Question) -> str:
    info = GAOKAO_SUBJECTS.get(question.subject or "")
    return info.chinese if info is not None else ""


@dataclass(frozen=True)
class GaokaoTemplate:
    name: str
    official: bool
    version: int = 1
    default_shots: int = 0
    budget: GenerationBudget = GAOKAO_BUDGET

    def instruction(self, question: Question) -> str:
        if self.official:
            prefix = question.verbatim_field("prefix_prompt")
            if prefix is None:
                raise InputError(
                    f"question {question.id!r} has no official GAOKAO-Bench prompt: pass the repository root "
                    "as --data (its Bench/Obj_Prompt.json and Sub_Prompt.json hold them), or use --prompt "
                    "gaokao-kaoshi"
                )
            return prefix
        task = _TASK.get(question.type, _TASK[QuestionType.OPEN]).format(subject=subject_name(question))
        return f"{task}\n{_FORMAT}题目如下：\n"

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        # Zero-shot: the protocol has no exemplars.
        instruction, text = self.instruction(question), question_text(question)
        if options.chat:
            return Prompt.chat([("system", with_system(options.system, instruction)), ("user", text)], 0)
        return Prompt(with_system(options.system, instruction + text), 0)

    def answer_end(self, chat: bool) -> str | None:
        return None if chat else "<eoa>"


GAOKAO = GaokaoTemplate("gaokao", official=True)
GAOKAO_KAOSHI = GaokaoTemplate("gaokao-kaoshi", official=False)
