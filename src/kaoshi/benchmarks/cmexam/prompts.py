"""`cmexam`: CMExam's prompt for off-the-shelf chat models, as the CMExam repository's evaluation script
sends it.

Read from williamliujl/CMExam, `src/evaluation/evaluate_chatglm_result.py` at commit
05787577d28bf553dc16b209aa095f44ecf89b2b (the script that evaluates ChatGLM-6B on the test file):

    single: "返回限制：只返回两行。假设你是一位医疗行业专家，请回答下列问题，注意是单选题，只需要返
             回一个最合适的选项。\\n{Question}:\\n{Options}\\n注意，结果只有两行，第一行只需要返回
             答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解释。输出格式限制为：
             “答案：”，“解释：”。\\n注意，题目是单选题，若有多个合适的答案，只返回最准确的即可。"
    multi:  "假设你是一位医疗行业专家，请回答下列问题。注意，该问题是多选题\\n{Question}:\\n{Options}
             \\n注意，请给出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。输出格式限制为
             “答案：”，“解释：”"

The script picks the single text when the gold answer is one letter, else the multi text: kaoshi's single
and multiple choice, which the CMExam loader decides the same way. `Question` and `Options` are the CSV
cells as read (the Options cell keeps its `A text` lines); a question that kept none (another
benchmark's, shuffled options) uses its stem and `A text` option lines. Sent zero-shot as
`model.chat(tokenizer, content, history=[])`: the text is the one user message.

Not CMExam's (kaoshi's, UNVERIFIED as a protocol): completion form (the same text, nothing appended), a
`--system` prompt (a system message; completion: the line before the text) and the budget. Zero-shot only,
as the script is: `--shots` is ignored (samples record 0); `default` has exemplars and ends with an answer
cue, the better choice for base models and log-likelihood. UNVERIFIED: the published CSV files were not
seen; kaoshi reads a CRLF file's line ends as `\\n`, inside the Options cell too (pandas would keep them).
Not reproduced: the script's answer reading (`re.findall(r"答案：(.*)，", …)`; kaoshi's extraction reads the
two lines), `evaluate_gpt_result.py` (af74d67: five questions per request, which kaoshi's one-question
requests cannot send) and the fine-tuning formats (`src/preprocess/prompt_templates.py` at 79b03f9,
`问题: {}, \\n 选项: {}` then `答案: {}`; `src/LoRA/templates/med_template.json`, `### 回答:`), which are
for their tuned models.
"""

from __future__ import annotations

from dataclasses import dataclass

from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.prompts.base import DEFAULT_BUDGET, GenerationBudget, Prompt, RenderOptions, one_message

# Protocol facts (src/evaluation/evaluate_chatglm_result.py): reproduced byte for byte.
SINGLE_HEAD = (
    "返回限制：只返回两行。"
    "假设你是一位医疗行业专家，请回答下列问题，注意是单选题，只需要返回一个最合适的选项。\n"
)
SINGLE_TAIL = (
    "\n注意，结果只有两行，第一行只需要返回答案的英文选项(注意只需要返回一个最合适的答案)，第二行进行简要的解释。"
    "输出格式限制为：“答案：”，“解释：”。\n注意，题目是单选题，若有多个合适的答案，只返回最准确的即可。"
)
MULTI_HEAD = "假设你是一位医疗行业专家，请回答下列问题。注意，该问题是多选题\n"
MULTI_TAIL = (
    "\n注意，请给出两行，第一行只需要返回答案的英文选项，第二行进行简要的解释。"
    "输出格式限制为“答案：”，“解释：”"
)
EXPLANATION_LEAD = "\n解释："


def options_cell(question: Question) -> str:
    """The Options cell as read; else the options one per line, `A text`, as the cell writes them."""
    cell = question.verbatim_field("Options")
    if cell is not None:
        return cell
    return "\n".join(f"{letter} {text}" for letter, text in question.options)


def cmexam_prompt(question: Question) -> str:
    """The text CMExam's evaluation script sends for `question`."""
    multi = question.type is QuestionType.MULTI
    head, tail = (MULTI_HEAD, MULTI_TAIL) if multi else (SINGLE_HEAD, SINGLE_TAIL)
    stem = question.verbatim_field("Question")
    return f"{head}{question.stem if stem is None else stem}:\n{options_cell(question)}{tail}"


@dataclass(frozen=True)
class CmexamTemplate:
    name: str = "cmexam"
    version: int = 1
    default_shots: int = 0
    budget: GenerationBudget = DEFAULT_BUDGET

    def render(self, question: Question, exam: Exam, options: RenderOptions) -> Prompt:
        # Zero-shot: CMExam's script sends no exemplars.
        return one_message(cmexam_prompt(question), options)

    def answer_end(self, chat: bool) -> str | None:
        # The reply CMExam asks for: the answer line, then the 解释 line, in both forms.
        return EXPLANATION_LEAD


CMEXAM = CmexamTemplate()
