"""C-Eval's prompts exactly as the official code sends them (`code/evaluator_series/evaluators/llama.py`
for completion, `chatgpt.py` for chat), answer-only and chain-of-thought, zero- and few-shot.

    header = "以下是中国关于{科目}考试的单项选择题，请选出其中的正确答案。"
    body   = question + "\\nA. " + A + "\\nB. " + B + "\\nC. " + C + "\\nD. " + D   (cells as read)

Completion: header + "\\n\\n", then per dev exemplar (file order) body + "\\n答案：" + answer + "\\n\\n"
(CoT: body + "\\n答案：让我们一步一步思考，\\n" + explanation + "\\n所以答案是" + answer + "。\\n\\n"), then
body(test) + "\\n答案：" (CoT: + "让我们一步一步思考，\\n1.").
Chat: system "你是一个中文人工智能助手，" + header; per exemplar user body + "\\n答案：" and assistant
answer (CoT: "让我们一步一步思考，\\n" + explanation + "\\n所以答案是" + answer + "。"); then user
body(test) + "\\n答案：". The first user message of the conversation (the first exemplar's, or the test
question's when there are none) starts with header + "\\n\\n".
Zero-shot completion is the README's prompt (header, then the question): llama.py's own zero-shot branch
adds a list and a string and fails. Zero-shot chat is the same with CoT as without: eval.py calls
chatgpt.py's zero-shot without `cot`, and its test turn never carries the CoT lead.

{科目} is the subject's Chinese name in the benchmark's table, as in the README (the released eval.py passes
the file's subject, a slip): C-Eval's for its presets (kaoshi.benchmarks.ceval.prompts), FinEval's for
the `fineval` ones (kaoshi.benchmarks.fineval.prompts: FinEval took C-Eval's header wording; the few-shot
header of its later code, `unify_evaluator.py`, is worded differently and adds instructions: not
reproduced here). CMMLU's prompts join a question's cells as `ceval_body` does.
Too long a prompt loses its last exemplars until it fits the model (the official code has no such step).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kaoshi.data.model import Exam, Question
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Message, Prompt, RenderOptions, with_system
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars, stored_answer, stored_explanation
from kaoshi.prompts.plain import BLOCK_SEPARATOR, format_body

# Protocol facts (the official evaluators): reproduced byte for byte.
ANSWER_CUE = "\n答案："
COT_LEAD = "让我们一步一步思考，\n"
COT_TEST_START = "1."  # the completion CoT prompt starts the first step for the model
COT_CONCLUSION = "所以答案是"
COT_CLOSE = "。"  # after the letter in '所以答案是A。'
CHAT_PERSONA = "你是一个中文人工智能助手，"
# Answer-only asks for the letter and nothing else: a short budget still leaves a chat model room for
# '答案是 B。' and a clause. CoT writes its steps first ('让我们一步一步思考，1. …') and needs room for them.
ANSWER_ONLY_BUDGET = GenerationBudget(objective=32, open=512)
COT_BUDGET = GenerationBudget(objective=1024, open=1024)


def ceval_header(question: Question, names: Mapping[str, str]) -> str:
    """The header naming the subject as `names` (subject -> Chinese name) does; a subject not there by
    its handle."""
    subject = question.subject or ""
    return f"以下是中国关于{names.get(subject, subject)}考试的单项选择题，请选出其中的正确答案。"


def ceval_body(question: Question) -> str:
    """The question and its options as the official code joins them: the cells exactly as the data file
    has them where the loader kept them, else the parsed (stripped) fields."""
    stem = question.verbatim_field("question")
    cells = [question.verbatim_field(letter) for letter in question.letters]
    if stem is None or None in cells:  # another loader, a shuffled question, or one rebuilt from a store
        return format_body(question)
    return stem + "".join(f"\n{letter}. {cell}" for letter, cell in zip(question.letters, cells, strict=True))


@dataclass(frozen=True)
class CevalTemplate:
    name: str
    cot: bool
    version: int = 2  # v1 stripped cells, had no chat persona or first-turn header, and no CoT '1.'
    default_shots: int = 5
    budget: GenerationBudget = DEFAULT_BUDGET
    # The benchmark's subject table, subject -> Chinese name, that the header takes the name from.
    subject_names: Mapping[str, str] = field(default_factory=dict, compare=False)

    def _solution(self, exemplar: Question) -> str:
        """What follows '答案：' in a solved exemplar (the assistant turn, in chat)."""
        answer = stored_answer(exemplar)
        if not self.cot:
            return answer
        explanation = stored_explanation(exemplar)
        # Every official dev row has an explanation; for one without (other data) the blank line the
        # official formula would leave is left out.
        steps = f"{explanation}\n" if explanation.strip() else ""
        return f"{COT_LEAD}{steps}{COT_CONCLUSION}{answer}{COT_CLOSE}"

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        pool = exemplar_pool(exam, options.exemplar_ids) if options.exemplar_ids else exam.fewshot
        exemplars = pick_exemplars(question, pool, options.shots, same_subject_only=True)
        header = ceval_header(question, self.subject_names)
        if options.chat:
            return self._chat(question, exemplars, header, options.system)
        # A user system prompt (`--system`) is the first line, before the official header.
        text = with_system(options.system, header) + BLOCK_SEPARATOR
        text += "".join(f"{ceval_body(e)}{ANSWER_CUE}{self._solution(e)}{BLOCK_SEPARATOR}" for e in exemplars)
        text += f"{ceval_body(question)}{ANSWER_CUE}"
        if self.cot:
            text += f"{COT_LEAD}{COT_TEST_START}"
        return Prompt(text, len(exemplars))

    def _chat(self, question: Question, exemplars: list[Question], header: str, system: str | None) -> Prompt:
        # A user system prompt (`--system`) goes first in the system message, before the official one.
        messages: list[Message] = [("system", with_system(system, CHAT_PERSONA + header))]
        for exemplar in exemplars:
            messages.append(("user", f"{ceval_body(exemplar)}{ANSWER_CUE}"))
            messages.append(("assistant", self._solution(exemplar)))
        # The official chat code does not start the test turn with the CoT lead: the model writes it.
        messages.append(("user", f"{ceval_body(question)}{ANSWER_CUE}"))
        # The official code repeats the header at the start of the conversation's first user message.
        role, first = messages[1]
        messages[1] = (role, header + BLOCK_SEPARATOR + first)
        return Prompt.chat(messages, len(exemplars))

    def answer_end(self, chat: bool) -> str | None:
        # Answer-only: the answer ends the exemplar's block (or assistant turn). CoT: '。' closes the
        # concluding sentence first.
        if self.cot:
            return COT_CLOSE if chat else COT_CLOSE + BLOCK_SEPARATOR
        return None if chat else BLOCK_SEPARATOR
