"""CFLUE's knowledge part against aliyun/cflue itself (KAOSHI_REALDATA/cflue): kaoshi loads every question
of data/knowledge/knowledge.json, its `cflue` prompt is what CFLUE's code sends for every row, and its
reading and grading of replies gives CFLUE's accuracy.

CFLUE's knowledge evaluation runs as published (`exec_knowledge_eval.eval_ability`: its loader
`utils/dataset.py`, its prompts `utils/format_example.py`, its answer reading `utils/extract_choice.py`, its
accuracy `utils/compute_score.acc_score`), with stand-ins only for what loads models or is not installed:
- `evaluator.evaluator` (loads the checkpoint with torch / transformers / modelscope): a scripted chat model
  that records each prompt and returns the reply written for that row;
- `comet` and `bert_score` (model-based metrics, imported by compute_score but not used by the knowledge
  evaluation) and `rouge` (its ROUGE, reported beside the accuracy): empty stand-ins; the ROUGE numbers it
  prints are therefore meaningless, and nothing here reads them. BLEU, jieba and scikit-learn are real.

The replies are written here, per row, from the row's own answer: CFLUE's requested two lines, other
layouts chat models write, think blocks, wrong answers. Where kaoshi and CFLUE's code grade a reply
differently, the reply's style must be one listed in OFFICIAL_READS_OTHERWISE with the reason.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from kaoshi.benchmarks import default_template_name, get_template, load_exam_result
from kaoshi.data.model import Exam
from kaoshi.prompts import RenderOptions
from kaoshi.qtypes import extract_answer, grade_answer
from tests.realdata.conftest import official_code, repository

KNOWLEDGE = Path("data/knowledge/knowledge.json")
QUESTIONS = 3864
TASKS = {"单项选择题": 2345, "多项选择题": 1171, "判断题": 348}
# What compute_score imports at its top, loaded before the official code so that leaving it (which drops
# the modules it imported) never unloads numpy or scikit-learn.
REAL_IMPORTS = ("numpy", "pandas", "tqdm", "jieba", "nltk", "sklearn.metrics", "sacrebleu.metrics")


# -- replies, written per row from its answer --------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    style: str
    text: str
    letters: str  # the letters the reply gives, in its order ('' where it gives none)


@dataclass(frozen=True)
class Row:
    """What a reply is written from: the letters it gives, the other options' letters, a wrong answer
    near it, the option texts, the task."""

    given: str
    others: str
    distractor: str
    options: dict[str, str]
    task: str

    @property
    def explain(self) -> str:
        if not self.others:
            return "各选项的表述均符合相关规定。"
        return f"选项{'、'.join(self.others)}的表述与相关规定不符，故不选。"


# Each style writes a reply giving `row.given`, or None where it does not apply to the row's task.
Style = Callable[[Row], str | None]
STYLES: dict[str, Style] = {
    "two lines (答案：X / 解析：…)": lambda r: f"答案：{r.given}\n解析：{r.explain}",
    "blank line, analysis over lines": lambda r: (
        f"答案：{r.given}\n\n解析：{r.explain}\n综上，本题选{r.given}。"
    ),
    "both on one line": lambda r: f"答案：{r.given}，解析：{r.explain}",
    "答案是：X": lambda r: f"答案是：{r.given}\n解析：{r.explain}",
    "letters separated by 、 or spaces": lambda r: (
        f"答案：{'、'.join(r.given)}\n解析：{r.explain}" if len(r.given) > 1 else None
    ),
    "letter with the option text": lambda r: (
        f"答案：{r.given}. {r.options[r.given]}\n解析：{r.explain}" if len(r.given) == 1 else None
    ),
    "letter with the option text in brackets": lambda r: (
        f"答案：{r.given}（{r.options[r.given]}）\n解析：{r.explain}" if len(r.given) == 1 else None
    ),
    "bare letters on the first line": lambda r: f"{r.given}\n解析：{r.explain}",
    "X选项正确, no 答案 word": lambda r: f"{'、'.join(r.given)}选项正确。{r.explain}",
    "正确答案是X in a sentence": lambda r: f"经分析，正确答案是{r.given}。{r.explain}",
    "think block, then the two lines": lambda r: (
        f"<think>\n回顾相关知识点，逐项分析各选项。\n</think>\n\n答案：{r.given}\n解析：{r.explain}"
    ),
    "two lines in bold": lambda r: f"**答案：{r.given}**\n**解析：**{r.explain}",
    "判断题 answered in words (答案：错误)": lambda r: (
        f"答案：{'错误' if r.options[r.given] == '错' else '正确'}\n解析：{r.explain}"
        if r.task == "判断题"
        else None
    ),
    # the styles CFLUE's code reads otherwise (OFFICIAL_READS_OTHERWISE)
    "no 答案 word (本题应选X)": lambda r: f"根据相关规定，本题应选{r.given}。{r.explain}",
    "选项X正确, no 答案 word": lambda r: f"选项{'、'.join(r.given)}正确，{r.explain}",
    "答案为X": lambda r: f"答案为{r.given}。\n解析：{r.explain}",
    "答案 then a clause on another option, one line": lambda r: (
        f"答案：{r.given}，{r.others[0]}项的表述不符合规定。" if r.others else None
    ),
    "letters joined by 和": lambda r: (
        f"答案：{'和'.join(r.given)}\n解析：{r.explain}" if len(r.given) > 1 else None
    ),
    "letters in brackets (答案：（X）)": lambda r: f"答案：（{r.given}）\n解析：{r.explain}",
    "letters in bold (答案：**X**)": lambda r: f"答案：**{r.given}**\n解析：{r.explain}",
    "think block that names another answer first": lambda r: (
        f"<think>\n初看答案是{r.distractor}，再核对相关规定，应为{r.given}。\n</think>\n\n"
        f"答案：{r.given}\n解析：{r.explain}"
    ),
    "think block cut off by the length limit": lambda r: (
        f"<think>\n先看题干。\n初步判断答案是{r.given}，但还需要逐项核对其余选项"
    ),
    "English sentence": lambda r: (
        f"The correct answer is {r.given}.\nExplanation: the other options do not fit."
    ),
    "English lines (Answer: X)": lambda r: f"Answer: {r.given}\nExplanation: the other options do not fit.",
    "multiple choice letters out of order": lambda r: (
        f"答案：{r.given[::-1]}\n解析：{r.explain}" if len(r.given) > 1 else None
    ),
}
# Replies that give no letter: kaoshi reads none (unparsed), as CFLUE's code reads none ('X').
NO_LETTERS = {"判断题 answered in words (答案：错误)", "think block cut off by the length limit"}
# Where CFLUE's code grades a reply otherwise than kaoshi, and why. utils/extract_choice.py deletes 、 , ，
# and spaces, then reads the first `答案[是：:]+([ABCDEF]+)`, else letters at the very start; a reply of
# exactly two lines is read from its first line; exec_knowledge_eval compares the reading with the answer
# as a string. Everywhere else the two grade every row alike.
OFFICIAL_READS_OTHERWISE = {
    "no 答案 word (本题应选X)": "no 答案 and no letter at the start: CFLUE reads no answer",
    "选项X正确, no 答案 word": "no 答案 and no letter at the start: CFLUE reads no answer",
    "答案为X": "为 is not one of 是 : ：, CFLUE reads no answer",
    "答案 then a clause on another option, one line": "with ， deleted, CFLUE reads 答案：B，A项… as BA",
    "letters joined by 和": "CFLUE reads the letters before 和 only",
    "letters in brackets (答案：（X）)": "（ between 答案： and the letters: CFLUE reads no answer",
    "letters in bold (答案：**X**)": "* between 答案： and the letters: CFLUE reads no answer",
    "think block that names another answer first": "CFLUE reads the think block: its first 答案是 wins",
    "think block cut off by the length limit": (
        "CFLUE reads 答案是X inside reasoning that never concluded; kaoshi takes no answer from it"
    ),
    "English sentence": "no 答案 and no letter at the start: CFLUE reads no answer",
    "English lines (Answer: X)": "CFLUE reads the A of 'Answer' at the start as the answer",
    "multiple choice letters out of order": "CFLUE compares strings: DA is not AD (kaoshi compares sets)",
}


def _other_answer(letters: str, options: str, multi: bool) -> str:
    """A wrong answer near `letters`: the next option (single), one letter fewer or more (multiple)."""
    if not multi:
        return options[(options.index(letters) + 1) % len(options)]
    if len(letters) > 1:
        return letters[:-1]
    return "".join(sorted(letters + options[(options.index(letters) + 1) % len(options)]))


def reply_for(index: int, record: dict[str, Any]) -> Reply:
    """The reply written for record `index`: the styles in turn (two lines where one does not apply to
    the task), every third pass through them giving a wrong answer."""
    names = list(STYLES)
    style = names[index % len(names)]
    options = {str(k): str(v) for k, v in ast.literal_eval(record["choices"]).items()}
    letters, multi = "".join(options), record["task"] == "多项选择题"
    given = str(record["answer"])
    if (index // len(names)) % 3 == 1:
        given = _other_answer(given, letters, multi)
    others = "".join(letter for letter in letters if letter not in given)
    row = Row(given, others, _other_answer(given, letters, multi), options, str(record["task"]))
    text = STYLES[style](row)
    if text is None:
        style = names[0]
        text = STYLES[style](row)
    assert text is not None
    given = given[::-1] if style == "multiple choice letters out of order" else given
    return Reply(style, text, "" if style in NO_LETTERS else given)


# -- CFLUE's own evaluation, run on those replies ------------------------------------------------------------
class ScriptedChat:
    """The stand-in for the checkpoint: `chat(tokenizer, prompt, history=None)` as Qwen's, returning the
    reply written for the row it is asked, in the evaluation's order."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[str] = []
        self.histories: list[object] = []

    def chat(self, tokenizer: object, prompt: str, history: object = None) -> tuple[str, list[Any]]:
        self.prompts.append(prompt)
        self.histories.append(history)
        return self.replies[len(self.prompts) - 1], []


def _stand_ins(model: ScriptedChat) -> dict[str, ModuleType]:
    evaluator = ModuleType("evaluator.evaluator")
    evaluator.load_models_tokenizer = lambda args: (model, None)  # type: ignore[attr-defined]
    evaluator.load_llama_models_tokenizer = lambda args: (model, None)  # type: ignore[attr-defined]
    comet = ModuleType("comet")
    comet.load_from_checkpoint = None  # type: ignore[attr-defined]
    bert_score = ModuleType("bert_score")
    bert_score.score = None  # type: ignore[attr-defined]
    rouge = ModuleType("rouge")

    class Rouge:
        def get_scores(self, candidate: object, reference: object, avg: bool = False) -> dict[str, Any]:
            return {name: {"f": 0.0} for name in ("rouge-1", "rouge-2", "rouge-l")}

    rouge.Rouge = Rouge  # type: ignore[attr-defined]
    return {"evaluator.evaluator": evaluator, "comet": comet, "bert_score": bert_score, "rouge": rouge}


@dataclass(frozen=True)
class OfficialRun:
    rows: list[dict[str, Any]]  # knowledge.json as read by json
    replies: list[Reply]
    prompts: list[str]  # what CFLUE's code passed to model.chat, in order
    histories: list[object]
    predictions: list[str]  # its reading of each reply (model_pred)
    answers: list[str]  # its gold answers
    accuracy: float  # compute_score.acc_score


@pytest.fixture(scope="module")
def cflue() -> Path:
    return repository("cflue")


@pytest.fixture(scope="module")
def official(cflue: Path, tmp_path_factory: pytest.TempPathFactory) -> OfficialRun:
    for name in REAL_IMPORTS:
        pytest.importorskip(name)
    rows = json.loads((cflue / KNOWLEDGE).read_text(encoding="utf-8"))
    replies = [reply_for(index, row) for index, row in enumerate(rows)]
    model = ScriptedChat([reply.text for reply in replies])
    out = tmp_path_factory.mktemp("cflue-official")
    args = SimpleNamespace(
        model_name="scripted", checkpoint_path="", save_result_dir=str(out), eval_type="knowledge"
    )
    recursion_limit = sys.getrecursionlimit()  # compute_score raises it for the whole process
    try:
        with pytest.MonkeyPatch.context() as patch, official_code(cflue), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's warnings on labels never predicted
            patch.chdir(cflue / "utils")  # utils/dataset.py reads '../data/knowledge/knowledge.json'
            for name, module in _stand_ins(model).items():
                patch.setitem(sys.modules, name, module)
            importlib.import_module("exec_knowledge_eval").eval_ability(args)
    finally:
        sys.setrecursionlimit(recursion_limit)
    saved = json.loads((out / "scripted_ability_result.json").read_text(encoding="utf-8"))
    return OfficialRun(
        rows,
        replies,
        model.prompts,
        model.histories,
        [str(record["model_pred"]) for record in saved],
        [str(record["answer"]) for record in saved],
        float(saved[0]["acc"]),
    )


@pytest.fixture(scope="module")
def exam(cflue: Path) -> Exam:
    result = load_exam_result("cflue", cflue)
    assert not result.errors
    return result.exam


# -- the tests -----------------------------------------------------------------------------------------------
def test_every_question_loads(cflue: Path, exam: Exam) -> None:
    assert len(exam.questions) == QUESTIONS
    assert Counter(q.domain for q in exam.questions) == TASKS
    rows = json.loads((cflue / KNOWLEDGE).read_text(encoding="utf-8"))
    assert [q.id for q in exam.questions] == [str(i) for i in range(len(rows))]
    assert all(
        q.verbatim_field("question") == row["question"] for q, row in zip(exam.questions, rows, strict=True)
    )


def test_the_prompt_of_every_row_is_cflues(exam: Exam, official: OfficialRun) -> None:
    # CFLUE's code sends each prompt as one user turn: model.chat(tokenizer, prompt, history=None)
    assert len(official.prompts) == len(exam.questions) == QUESTIONS
    assert set(map(repr, official.histories)) == {"None"}
    assert default_template_name("cflue") == "cflue"
    template = get_template("cflue")
    differing = []
    for question, sent in zip(exam.questions, official.prompts, strict=True):
        chat = template.render(question, exam, RenderOptions(shots=0, chat=True))
        completion = template.render(question, exam, RenderOptions(shots=0))
        if chat.messages != (("user", sent),) or completion.text != sent:
            differing.append((question.id, sent, chat.messages))
    assert not differing, f"{len(differing)} of {QUESTIONS} prompts differ, first: {differing[:2]}"


def test_kaoshi_grades_the_replies_as_cflue_does(exam: Exam, official: OfficialRun) -> None:
    assert official.answers == [str(record["answer"]) for record in official.rows]
    rows = zip(exam.questions, official.replies, official.predictions, official.answers, strict=True)
    kaoshi_right = official_right = 0
    graded_apart: Counter[str] = Counter()
    for question, reply, prediction, answer in rows:
        extraction = extract_answer(question, reply.text)
        # kaoshi reads the letters every reply gives, and none from a reply that gives none
        read = ("ok", frozenset(reply.letters)) if reply.letters else ("unparsed", None)
        assert (extraction.status, extraction.answer) == read, (question.id, reply)
        grade = grade_answer(question, extraction.answer)
        assert grade.correct is not None
        kaoshi_right += grade.correct
        official_right += prediction == answer
        if reply.style in OFFICIAL_READS_OTHERWISE:
            if grade.correct != (prediction == answer):
                graded_apart[reply.style] += 1
        else:
            assert prediction == (reply.letters or "X"), (question.id, reply, prediction)
            assert grade.correct == (prediction == answer), (question.id, reply, prediction)
    # CFLUE's accuracy is its own count of right readings, and differs from kaoshi's by the rows above
    assert official.accuracy * QUESTIONS == pytest.approx(official_right)
    assert set(graded_apart) == set(OFFICIAL_READS_OTHERWISE), "every listed style must occur"
    print(
        f"\n{QUESTIONS} replies: CFLUE {official_right} right ({official.accuracy:.4f}), "
        f"kaoshi {kaoshi_right}; graded apart: {dict(graded_apart)}"
    )
