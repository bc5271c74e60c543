"""AGIEval's prompts for its Chinese tasks (`agieval`), zero-shot and few-shot, completion and chat.

Stated in kaoshi's reference (BENCHMARKS.md): the Chinese zero-shot prompt ends '答案：从A到D, 我们应选择'.
The rest is AGIEval's code at 5c77d07, the commit BENCHMARKS.md pins: src/dataset_loader.py
(`convert_zero_shot`, `combine_prompt`, `concat_prompt`, `concat_prompt_chat_mode`, `convert_few_shot`) and
openai_api.py, reproduced byte for byte. Checked by running that code on every row of the 12 published
Chinese task files (tests/realdata/test_agieval_real.py): zero-shot, few-shot with 1 to all of a task's
demos, completion and chat, all identical. With the fields as the file has them:

    zero-shot, choice: passage + "问题：" + question + " " + "选项：" + " ".join(options) + "\\n"
                       + "答案：从A到{L}, 我们应选择"     (L: the last option's letter; one option string: D)
    zero-shot, cloze:  passage + "问题：" + question + "\\n" + "答案："
    few-shot:          "以下是考试中各个问题的答案。\\n", then per demo i (1, 2, …)
                       "问题 {i}.   " + passage + " " + question + "\\n" + "从以下选项中选择:    "
                       + " ".join(options) + "\\n" + "答案是 {label}" + "\\n" + "\\n",
                       then the question as demo n+1 without its answer line (the prompt ends after its
                       options). Cloze demos and questions leave out the passage and the options.

gaokao-english, which AGIEval counts among its English-prompt tasks, gets the English wording: "Q: " …
" Answer Choices: " … "\\nA: Among A through {L}, the answer is" (one option string: E), and few-shot
"Here are the answers for the problems in the exam.\\n", "Problem {i}.   ", "Choose from the following
options:    ", "The answer is therefore {label}". A list label is written as Python writes it
("答案是 ['A', 'D']"), as the upstream code formats it. Chat (openai_api.py, `query_azure_openai_chat`):
the system message "You are a helpful AI assistant.", then zero-shot the prompt as one user message, or
few-shot one user turn (the demo's question) and one assistant turn ('答案是 …') per demo, then the
question, with no header. `--system` goes before AGIEval's system message (chat) or is a first line
(completion, where AGIEval sends none).

The demos are AGIEval's own, from data/few_shot_prompts.csv (demos.py), the first n of the
question's task in file order whatever their type; the test questions are never demos. Without demos the
prompt is zero-shot. AGIEval truncates demos to 2,048 GPT-4 tokens; kaoshi drops demos until the prompt
fits the model. Counted with cl100k_base (GPT-4's encoding), AGIEval's cap keeps 1 of gaokao-chinese's 3
demos in completion mode, and every demo of the other tasks and of gaokao-chinese in chat: `--shots 1`
gives gaokao-chinese's completion prompt. A question whose fields were not kept (shuffled, rebuilt from a
store) is rendered from its parsed fields: its stem (passage and question joined by a newline) and
'(A)text' options.

A few-shot prompt ends after the options, as AGIEval's does, for a model to write '答案是 X': a
log-likelihood run scores the letters right there, so log-likelihood is meant for zero-shot.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from kaoshi.data.model import Exam, Question, QuestionType, format_gold
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Message, Prompt, RenderOptions, with_system
from kaoshi.prompts.exemplars import exemplar_pool

OPTION_LETTERS = "ABCDEFG"
CHAT_SYSTEM = "You are a helpful AI assistant."
# The task AGIEval prompts in English although its exam is Chinese.
ENGLISH_PROMPT_TASKS = frozenset({"gaokao-english"})


@dataclass(frozen=True)
class Wording:
    """One language's words in AGIEval's prompts."""

    question: str  # zero-shot: before the question
    choices: str  # zero-shot: before the options
    ending: str  # zero-shot choice ending, '{}' the last option's letter
    one_option_count: int  # the option count a single option string stands for
    cloze_ending: str
    header: str  # few-shot: the first line
    numbered: str  # few-shot: '{}' the demo's number
    demo_choices: str
    demo_answer: str  # few-shot: before the demo's answer


CHINESE = Wording(
    question="问题：",
    choices="选项：",
    ending="答案：从A到{}, 我们应选择",
    one_option_count=4,
    cloze_ending="答案：",
    header="以下是考试中各个问题的答案。\n",
    numbered="问题 {}.   ",
    demo_choices="从以下选项中选择:    ",
    demo_answer="答案是 ",
)
ENGLISH = Wording(
    question="Q: ",
    choices="Answer Choices: ",
    ending="A: Among A through {}, the answer is",
    one_option_count=5,
    cloze_ending="A: The answer is",
    header="Here are the answers for the problems in the exam.\n",
    numbered="Problem {}.   ",
    demo_choices="Choose from the following options:    ",
    demo_answer="The answer is therefore ",
)


def wording_for(question: Question) -> Wording:
    return ENGLISH if question.subject in ENGLISH_PROMPT_TASKS else CHINESE


@dataclass(frozen=True)
class Fields:
    """A row's passage, question and option strings as the data file has them (or rebuilt)."""

    passage: str
    question: str
    options: list[str]

    @classmethod
    def of(cls, question: Question) -> Fields:
        stem = question.verbatim_field("question")
        passage = question.verbatim_field("passage")
        stored = question.verbatim_field("options")
        if stem is None or passage is None or (question.type.is_choice and stored is None):
            options = [f"({letter}){text}" for letter, text in question.options]
            return cls("", question.stem, options)
        return cls(passage, stem, json.loads(stored) if stored is not None else [])


def zero_shot(question: Question) -> str:
    words, fields = wording_for(question), Fields.of(question)
    asked = f"{fields.passage}{words.question}{fields.question}"
    if question.type is QuestionType.CLOZE:
        return f"{asked}\n{words.cloze_ending}"
    count = len(fields.options) if len(fields.options) != 1 else words.one_option_count
    last = OPTION_LETTERS[min(count, len(OPTION_LETTERS)) - 1]
    return f"{asked} {words.choices}{' '.join(fields.options)}\n{words.ending.format(last)}"


def demo_input(question: Question, number: int) -> str:
    """A demo's (or the question's) text in a few-shot prompt, up to its answer line."""
    words, fields = wording_for(question), Fields.of(question)
    if question.type is QuestionType.CLOZE:
        return f"{words.numbered.format(number)}{fields.question}\n"
    return (
        f"{words.numbered.format(number)}{fields.passage} {fields.question}\n"
        f"{words.demo_choices}{' '.join(fields.options)}\n"
    )


def demo_answer(demo: Question) -> str:
    """'答案是 X': the label (or cloze answer) as the data writes it, else kaoshi's form of the answer."""
    written = demo.verbatim_field("answer" if demo.type is QuestionType.CLOZE else "label")
    return wording_for(demo).demo_answer + (written if written is not None else format_gold(demo.answer))


def task_demos(question: Question, pool: Sequence[Question], shots: int) -> list[Question]:
    """The first `shots` solved demos of the question's task, in pool order, whatever their type."""
    if shots <= 0:
        return []
    same_task = (q for q in pool if q.subject == question.subject and q.has_answer and q.id != question.id)
    return [q for _, q in zip(range(shots), same_task, strict=False)]


@dataclass(frozen=True)
class AgievalTemplate:
    name: str = "agieval"
    version: int = 1
    default_shots: int = 0  # AGIEval's headline setting; --shots N uses its demos where loaded
    budget: GenerationBudget = DEFAULT_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        pool = exemplar_pool(exam, options.exemplar_ids) if options.exemplar_ids else exam.fewshot
        demos = task_demos(question, pool, options.shots)
        if options.chat:
            return self._chat(question, demos, options.system)
        if not demos:
            text = zero_shot(question)
        else:
            text = wording_for(question).header
            text += "".join(f"{demo_input(d, n)}{demo_answer(d)}\n\n" for n, d in enumerate(demos, start=1))
            text += demo_input(question, len(demos) + 1)
        return Prompt(with_system(options.system, text), len(demos))

    def _chat(self, question: Question, demos: list[Question], system: str | None) -> Prompt:
        messages: list[Message] = [("system", with_system(system, CHAT_SYSTEM))]
        if not demos:
            messages.append(("user", zero_shot(question)))
            return Prompt.chat(messages, 0)
        for number, demo in enumerate(demos, start=1):
            messages += [("user", demo_input(demo, number)), ("assistant", demo_answer(demo))]
        messages.append(("user", demo_input(question, len(demos) + 1)))
        return Prompt.chat(messages, len(demos))

    def answer_end(self, chat: bool) -> str | None:
        # A demo's answer ends its line ('答案是 A\n\n'); in chat it ends the assistant turn.
        return None if chat else "\n"


AGIEVAL = AgievalTemplate()
