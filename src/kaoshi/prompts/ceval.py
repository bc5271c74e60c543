"""C-Eval's own prompts (README and tutorial): answer-only and chain-of-thought, completion and chat.

Completion: the header, a blank line, k solved dev exemplars of the same subject each followed by a
blank line, then the test question ending in '答案：' (CoT: '答案：让我们一步一步思考，\\n').
Chat: the header is the system message; each exemplar is a user turn ending in '答案：' and a
hard-coded assistant turn with the answer; the test question is the last user turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.data.ceval_subjects import CEVAL_SUBJECTS
from kaoshi.data.model import Exam, Question, format_gold
from kaoshi.prompts.base import Message, Prompt, RenderOptions, with_system
from kaoshi.prompts.exemplars import exemplar_pool, pick_exemplars
from kaoshi.prompts.plain import format_body

COT_LEAD = "让我们一步一步思考，"


def ceval_header(question: Question) -> str:
    subject = question.subject or ""
    name = CEVAL_SUBJECTS[subject].chinese if subject in CEVAL_SUBJECTS else subject
    return f"以下是中国关于{name}考试的单项选择题，请选出其中的正确答案。"


@dataclass(frozen=True)
class CevalTemplate:
    name: str
    cot: bool
    version: int = 1
    default_shots: int = 5

    def _solution(self, exemplar: Question) -> str:
        letter = format_gold(exemplar.answer)
        if not self.cot:
            return letter
        steps = exemplar.explanation.strip()
        return f"{COT_LEAD}\n{steps}\n所以答案是{letter}。" if steps else f"{COT_LEAD}\n所以答案是{letter}。"

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        pool = exemplar_pool(exam, options.exemplar_ids) if options.exemplar_ids else exam.fewshot
        exemplars = pick_exemplars(question, pool, options.shots, same_subject_only=True)
        header = with_system(options.system, ceval_header(question))
        if options.chat:
            messages: list[Message] = [("system", header)]
            for exemplar in exemplars:
                messages.append(("user", f"{format_body(exemplar)}\n答案："))
                messages.append(("assistant", self._solution(exemplar)))
            messages.append(("user", f"{format_body(question)}\n答案："))
            return Prompt.chat(messages, len(exemplars))
        blocks = [header]
        blocks += [f"{format_body(e)}\n答案：{self._solution(e)}" for e in exemplars]
        ending = f"答案：{COT_LEAD}\n" if self.cot else "答案："
        blocks.append(f"{format_body(question)}\n{ending}")
        return Prompt("\n\n".join(blocks), len(exemplars))


CEVAL_ANSWER_ONLY = CevalTemplate("ceval-answer-only", cot=False)
CEVAL_COT = CevalTemplate("ceval-cot", cot=True)
