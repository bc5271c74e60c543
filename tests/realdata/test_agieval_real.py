"""AGIEval's published Chinese tasks (KAOSHI_REALDATA/AGIEval, pinned at commit 5c77d07) against AGIEval's
own code, run from that checkout:

- every row of the 12 Chinese task files loads with the default options (4,723 questions, no error), and
  each quirk of the published rows is one warning with its count and first places;
- kaoshi's `agieval` prompts equal, byte for byte, what src/dataset_loader.py builds from every row:
  zero-shot, and few-shot with each number of the file's demos (1 to all), completion and chat;
- on a table of realistic replies, kaoshi's score equals what src/post_process.py + src/evaluation.py
  give, except in the directions listed with each reply and on the rows whose labels are quirks.

AGIEval's dataset_loader imports tiktoken and loads GPT-4's tokenizer at import, to cut few-shot prompts at
2,048 tokens. The tokenizer's data cannot be downloaded where tests run, so a stand-in `tiktoken` (an
encoder that counts no tokens) is in sys.modules while the official code is imported: it cuts no prompt,
and the few-shot prompts are compared for every demo count instead (kaoshi drops demos to fit the model's
context; with GPT-4's tokenizer AGIEval keeps 1 of gaokao-chinese's 3 demos in completion mode and all of
them elsewhere: `--shots 1` reproduces that prompt). The chat prompts' system message is the one
openai_api.py's `query_azure_openai_chat` sends, written here: that module cannot be imported (at import
it picks an API key modulo the length of its empty key list).
"""

from __future__ import annotations

import importlib
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import kaoshi
from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.benchmarks.agieval.rows import AGIEVAL_TASKS
from kaoshi.data.collect import LoadResult
from kaoshi.data.model import Exam, Question, QuestionType
from kaoshi.prompts import RenderOptions
from kaoshi.qtypes import extract_answer, grade_answer
from tests.realdata.conftest import official_code, repository

# AGIEval's code has escapes Python warns about ('\\$' in a plain string) when it is compiled.
pytestmark = pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")
TOTAL = 4723
DEMOS = {task: 5 for task in AGIEVAL_TASKS} | {"gaokao-chinese": 3, "gaokao-english": 3, "logiqa-zh": 3}
CHAT_SYSTEM = "You are a helpful AI assistant."  # openai_api.py, query_azure_openai_chat


@dataclass(frozen=True)
class Official:
    """AGIEval's modules, imported from the checkout."""

    dataset_loader: Any
    post_process: Any
    evaluation: Any


@pytest.fixture(scope="module")
def repo() -> Path:
    return repository("AGIEval")


@pytest.fixture(scope="module")
def loaded(repo: Path) -> LoadResult:
    return load_exam_result("agieval", repo)  # on_invalid="fail": one bad row would raise


@pytest.fixture(scope="module")
def official(repo: Path) -> Iterator[Official]:
    with official_code(repo), _tiktoken_counting_no_tokens():
        # AGIEval's src/ package (imported by name: kaoshi's own checkout has a src/ folder too)
        modules = [
            importlib.import_module(f"src.{name}")
            for name in ("dataset_loader", "post_process", "evaluation")
        ]
        yield Official(*modules)


@contextmanager
def _tiktoken_counting_no_tokens() -> Iterator[None]:
    class Encoder:
        def encode(self, text: str) -> list[int]:
            return []

    stand_in = types.ModuleType("tiktoken")
    stand_in.get_encoding = lambda name: Encoder()  # type: ignore[attr-defined]
    stand_in.encoding_for_model = lambda name: Encoder()  # type: ignore[attr-defined]
    saved = sys.modules.get("tiktoken")
    sys.modules["tiktoken"] = stand_in
    try:
        yield
    finally:
        if saved is None:
            sys.modules.pop("tiktoken", None)
        else:
            sys.modules["tiktoken"] = saved


def v1(repo: Path) -> str:
    return str(repo / "data" / "v1")


def task_questions(exam: Exam, task: str) -> list[Question]:
    return [q for q in exam.questions if q.subject == task]


# -- loading -------------------------------------------------------------------------------------------------
# (count, description, the first places as task:line) of each quirk warning, in the order they are met.
QUIRKS = [
    (
        363,
        "write options as 'A．…', not '(A)…'",
        ["gaokao-chinese:24", "gaokao-chinese:25", "gaokao-chinese:26"],
    ),
    (
        76,
        "write options as 'A.…', not '(A)…'",
        ["gaokao-english:32", "gaokao-english:33", "gaokao-english:34"],
    ),
    (
        3,
        "write an option's letter where another belongs, e.g. '(C)' twice (read by place)",
        ["gaokao-history:79", "gaokao-history:81", "gaokao-history:84"],
    ),
    (2, "have an option with no text after its letter", ["gaokao-chemistry:75", "gaokao-chemistry:78"]),
    (1, "have an option without a letter (read by place)", ["gaokao-chemistry:108"]),
    (
        7,
        "write a multi-answer label as text ('AD', 'A B D'): read as a multi-answer question on the exact "
        "set (AGIEval's scorer compares one letter with the text, so never credits it)",
        ["gaokao-mathqa:149", "gaokao-mathqa:150", "gaokao-mathqa:246"],
    ),
    (5, "write options as 'A …', not '(A)…'", ["logiqa-zh:3", "logiqa-zh:6", "logiqa-zh:8"]),
    (2, "write options as 'A:…', not '(A)…'", ["logiqa-zh:11", "logiqa-zh:16"]),
    (1, "write options as 'A、…', not '(A)…'", ["logiqa-zh:75"]),
    (
        19,
        "write their options out of letter order (read by the letters written, as AGIEval's prompt shows "
        "them)",
        ["logiqa-zh:109", "logiqa-zh:115", "logiqa-zh:141"],
    ),
    (1, "write options as 'A。…', not '(A)…'", ["logiqa-zh:376"]),
    (
        1,
        "have an empty label list and no answer: loaded without a gold answer, so answered but not graded "
        "(AGIEval's scorer counts it wrong)",
        ["jec-qa-kd:212"],
    ),
    (1, "have a mark among the label's letters (['A', 'C', 'D', '。']): left out", ["jec-qa-ca:49"]),
]
# Rows whose published label is a quirk (0-based ids): AGIEval's scorer can never credit them.
TEXT_LABELS = {f"gaokao-mathqa/{n}" for n in (148, 149, 245, 246, 247, 285, 286)}
STRAY_MARK = "jec-qa-ca/48"
NO_LABEL = "jec-qa-kd/211"


def test_every_chinese_task_loads_whole(repo: Path, loaded: LoadResult, official: Official) -> None:
    exam = loaded.exam
    assert loaded.errors == () and loaded.dropped == ()
    assert len(exam.questions) == TOTAL
    counts = Counter(q.subject for q in exam.questions)
    assert counts == {task: size for task, (_, size) in AGIEVAL_TASKS.items()}
    for task in AGIEVAL_TASKS:  # the rows AGIEval's own reader finds, in its order
        rows = official.dataset_loader.read_jsonl(f"{v1(repo)}/{task}.jsonl")
        assert [q.id for q in task_questions(exam, task)] == [f"{task}/{n}" for n in range(len(rows))]
    assert Counter(q.type for q in exam.questions) == {
        QuestionType.SINGLE: 2563,
        QuestionType.MULTI: 2042,  # jec-qa-kd and -ca, gaokao-physics' 35 lists, mathqa's 7 text labels
        QuestionType.CLOZE: 118,
    }
    assert [q.id for q in exam.questions if q.answer is None] == [NO_LABEL]


def test_each_quirk_is_one_warning_with_its_places(repo: Path, loaded: LoadResult) -> None:
    folder = repo / "data" / "v1"

    def places(first: list[str]) -> str:
        return ", ".join(f"{folder / task}.jsonl:{line}" for task, line in (p.split(":") for p in first))

    expected = [
        f"{count} row(s) {description}: {places(first)}" + (f" and {count - 3} more" if count > 3 else "")
        for count, description, first in QUIRKS
    ]
    english = "aqua-rat, logiqa-en, lsat-ar, lsat-lr, lsat-rc, math, sat-en, sat-en-without-passage, sat-math"
    assert loaded.warnings == (f"{folder}: skipped the English AGIEval tasks {english}", *expected)


def test_quirky_rows_are_read_as_agievals_prompt_shows_them(loaded: LoadResult) -> None:
    exam = loaded.exam
    swapped = exam.question("logiqa-zh/108")  # written '(A)', '(C)', '(B)', '(D)'; the label names (B)
    assert [letter for letter, _ in swapped.options] == list("ABCD")
    assert swapped.option_map["B"] == "2号阀和3号阀。" and swapped.answer == frozenset("B")
    twice = exam.question("gaokao-history/78")  # '(C)' written for D: by place
    assert twice.option_map["D"] == "外资工业享有免税特权" and twice.answer == frozenset("D")
    assert exam.question("gaokao-chemistry/74").option_map["D"] == ""  # '(D)' alone; the label is B
    assert exam.question("gaokao-chemistry/107").option_map["A"] == "錀   第七周期"
    assert exam.question("gaokao-english/31").option_map["A"] == "They will be moved."
    assert exam.question("gaokao-mathqa/148").answer == frozenset("AD")
    assert exam.question(STRAY_MARK).answer == frozenset("ACD")


def test_the_demos_are_agievals(loaded: LoadResult, official: Official, repo: Path) -> None:
    demos = loaded.exam.fewshot
    assert Counter(q.subject for q in demos) == DEMOS
    for task in AGIEVAL_TASKS:
        made = official.dataset_loader.combine_prompt(
            str(repo / "data" / "few_shot_prompts.csv"), task, load_explanation=False
        )
        assert len(made) == DEMOS[task]


# -- prompts -------------------------------------------------------------------------------------------------
def _differences(pairs: list[tuple[str, Any, Any]]) -> list[str]:
    return [
        f"{where}:\n kaoshi   {ours!r}\n official {theirs!r}"
        for where, ours, theirs in pairs
        if ours != theirs
    ]


def test_zero_shot_prompts_equal_agievals_on_every_row(
    loaded: LoadResult, official: Official, repo: Path
) -> None:
    exam, template = loaded.exam, get_template("agieval")
    pairs: list[tuple[str, Any, Any]] = []
    for task in AGIEVAL_TASKS:
        made = official.dataset_loader.load_dataset(task, "zero-shot", v1(repo))
        chat = official.dataset_loader.load_dataset(task, "zero-shot", v1(repo), chat_mode=True)
        questions = task_questions(exam, task)
        assert len(made) == len(chat) == len(questions)
        for question, text, message in zip(questions, made, chat, strict=True):
            pairs.append(
                (question.id, template.render(question, exam, RenderOptions(0)).text, text["context"])
            )
            chatted = template.render(question, exam, RenderOptions(0, chat=True)).messages
            pairs.append(
                (f"{question.id} chat", chatted, (("system", CHAT_SYSTEM), ("user", message["context"])))
            )
    assert len(pairs) == 2 * TOTAL
    assert _differences(pairs)[:3] == []


def test_few_shot_prompts_equal_agievals_on_every_row(
    loaded: LoadResult, official: Official, repo: Path
) -> None:
    exam, template, loader = loaded.exam, get_template("agieval"), official.dataset_loader
    csv = str(repo / "data" / "few_shot_prompts.csv")
    pairs: list[tuple[str, Any, Any]] = []
    for task in AGIEVAL_TASKS:
        questions = task_questions(exam, task)
        rows = loader.read_jsonl(f"{v1(repo)}/{task}.jsonl")
        demos = loader.combine_prompt(csv, task, load_explanation=False)
        for shots in range(1, len(demos) + 1):
            head, kept = loader.concat_prompt(demos[:shots], task, max_tokens=2048)
            assert kept == shots
            for question, row in zip(questions, rows, strict=True):
                prompt = template.render(question, exam, RenderOptions(shots))
                assert prompt.shots == shots
                pairs.append(
                    (
                        f"{question.id} {shots}-shot",
                        prompt.text,
                        loader.convert_few_shot(row, task, head, kept),
                    )
                )
        chat = loader.load_dataset(
            task, "few-shot", v1(repo), prompt_path=csv, max_tokens=2048, chat_mode=True
        )
        for question, made in zip(questions, chat, strict=True):
            messages = template.render(question, exam, RenderOptions(len(demos), chat=True)).messages
            theirs = (("system", CHAT_SYSTEM), *((m["role"], m["content"]) for m in made["context"]))
            pairs.append((f"{question.id} chat", messages, theirs))
    assert len(pairs) == sum(len(task_questions(exam, task)) * (n + 1) for task, n in DEMOS.items())
    assert _differences(pairs)[:3] == []


# -- scores --------------------------------------------------------------------------------------------------
def letters(question: Question) -> str:
    return "".join(sorted(question.answer)) if isinstance(question.answer, frozenset) else ""


def wrong(question: Question) -> str:
    """A wrong answer: the first letter not in the gold set (a set holding every letter: its first)."""
    gold = letters(question)
    return next((letter for letter in question.letters if letter not in gold), question.letters[0])


def full_width(text: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) for ch in text)


# How kaoshi's score may differ from AGIEval's on a reply: SAME (never), KAOSHI_READS (kaoshi credits
# replies AGIEval's extractor misreads or misses, never the reverse), OFFICIAL_GUESSES (AGIEval credits
# replies whose stated answer is wrong, by reading a letter the reply only mentions; never the reverse).
SAME, KAOSHI_READS, OFFICIAL_GUESSES = "same", "kaoshi reads more", "official credits a mention"
Reply = Callable[[Question], str]
CHOICE_REPLIES: list[tuple[str, Reply, str, str]] = [
    ("bare", letters, SAME, ""),
    ("答案是X", lambda q: f"答案是{letters(q)}", SAME, ""),
    ("答案是 X。", lambda q: f"答案是 {letters(q)}。", SAME, ""),
    ("base model continuing", lambda q: f" {letters(q)}", SAME, ""),
    ("demo's list form", lambda q: f"答案是 {sorted(letters(q))}", SAME, ""),
    ("English", lambda q: f"The answer is ({letters(q)}).", SAME, ""),
    ("letters with 、", lambda q: "答案是" + "、".join(letters(q)), SAME, ""),
    ("wrong", lambda q: f"答案是{wrong(q)}", SAME, ""),
    ("no letter", lambda q: "我无法确定答案。", SAME, ""),
    (
        "echoing the prompt's ending",
        lambda q: f"从A到D, 我们应选择{letters(q)}",
        KAOSHI_READS,
        "AGIEval reads the first capital letter (zero-shot and, without '答案是', few-shot: the A of "
        "'从A到D'); for multi-answer tasks every capital (A, D and the answer)",
    ),
    (
        "English echo",
        lambda q: f"Among A through D, the answer is {letters(q)}.",
        KAOSHI_READS,
        "as above: the A of 'Among A through D'",
    ),
    (
        "reasoning, then 故选",
        lambda q: f"选项{wrong(q)}说法错误，与题意不符。故选{letters(q)}。",
        KAOSHI_READS,
        "AGIEval takes the first letter mentioned (multi-answer: every letter mentioned)",
    ),
    (
        "think block",
        lambda q: f"<think>先看选项{wrong(q)}，不对。再看其他选项。</think>\n答案：{letters(q)}",
        KAOSHI_READS,
        "AGIEval reads the think block's letters; kaoshi drops the block",
    ),
    (
        "lower case",
        lambda q: f"答案是{letters(q).lower()}",
        KAOSHI_READS,
        "AGIEval reads capitals only; kaoshi reads a lower-case letter after an answer cue (one letter)",
    ),
    (
        "full-width letter",
        lambda q: f"答案是{full_width(letters(q))}",
        KAOSHI_READS,
        "AGIEval's patterns match ASCII capitals only; kaoshi reads text NFKC-normalised",
    ),
    (
        "the gold letter mentioned, a wrong one chosen",
        lambda q: f"选项{letters(q)}看似正确，但与材料不符。故选{wrong(q)}。",
        OFFICIAL_GUESSES,
        "AGIEval takes the first letter mentioned (the gold one) although the reply chooses another",
    ),
    (
        "multi-answer: wrong letter after the echo",
        lambda q: f"从A到D, 我们应选择{wrong(q)}",
        OFFICIAL_GUESSES,
        "single: the A of '从A到D'; multi-answer: A, D and the letter chosen may make up the gold set",
    ),
]


def _strip_dollars(text: str) -> str:
    return text.replace("$", "")


def _answer(question: Question) -> str:
    return question.answer if isinstance(question.answer, str) else ""


CLOZE_REPLIES: list[tuple[str, Reply, str, str]] = [
    ("cloze: wrong", lambda q: "答案是 12345", SAME, ""),
    ("cloze: no answer", lambda q: "我不会做。", SAME, ""),
    (
        "cloze: reasoning with $…$, no statement",
        lambda q: f"设 $t=1$，则所求为 ${_strip_dollars(_answer(q))}$",
        SAME,
        "",
    ),
    (
        "cloze: 答案是 X",
        lambda q: f"答案是 {_answer(q)}",
        KAOSHI_READS,
        "zero-shot: AGIEval's '\\$(.*)\\$' is greedy, so '$5$;$10$' reads '5$;$10' (and its is_equiv keeps "
        "'$'); few-shot it is read whole, as kaoshi reads it",
    ),
    (
        "cloze: bare",
        _answer,
        KAOSHI_READS,
        "as above; and '1;$\\frac{8}{9}$' without '$' reads its last number",
    ),
    (
        "cloze: boxed",
        lambda q: "所以答案为 $\\boxed{" + _strip_dollars(_answer(q)) + "}$",
        KAOSHI_READS,
        "AGIEval compares '5;10' with '$5$;$10$' as written ('$' stays); few-shot it compares the whole "
        "reply",
    ),
    ("cloze: English", lambda q: f"The answer is {_answer(q)}", KAOSHI_READS, "as for '答案是 X'"),
    (
        "cloze: think block",
        lambda q: f"<think>计算 1+1=2。</think>\n答案：{_answer(q)}",
        KAOSHI_READS,
        "AGIEval reads after the last '=' (inside the think block); few-shot, the whole reply",
    ),
]
SETTINGS = ("zero-shot", "few-shot")
# (reply, row) where AGIEval credits a reply kaoshi does not read, and why.
AGIEVAL_ONLY = {
    ("cloze: bare", "gaokao-mathcloze/21"): (
        "the answer is two sentences of prose; kaoshi reads a reply without an answer statement as the "
        "answer only when it is short and not prose, AGIEval's few-shot scorer reads the whole reply"
    ),
}


@dataclass
class Tally:
    same: int = 0
    kaoshi_only: int = 0  # kaoshi credits, AGIEval does not
    official_only: int = 0


def _kaoshi_correct(question: Question, reply: str, prompt: str) -> bool | None:
    """The sample's `correct` as a run records it: an answer read `ok` is graded, else none is."""
    extraction = extract_answer(question, reply, prompt)
    return grade_answer(question, extraction.answer if extraction.status == "ok" else None).correct


def test_scores_equal_agievals_but_where_listed(loaded: LoadResult, official: Official, repo: Path) -> None:
    exam, template = loaded.exam, get_template("agieval")
    quirky = {*TEXT_LABELS, STRAY_MARK, NO_LABEL}
    tallies: dict[tuple[str, str], Tally] = {}
    for task in AGIEVAL_TASKS:
        labels = [r.label for r in official.dataset_loader.load_dataset_as_result_schema(task, v1(repo))]
        for question, label in zip(task_questions(exam, task), labels, strict=True):
            prompt = template.render(question, exam, RenderOptions(0)).text
            replies = CLOZE_REPLIES if question.type is QuestionType.CLOZE else CHOICE_REPLIES
            for name, reply, _, _ in replies:
                text = reply(question)
                ours = _kaoshi_correct(question, text, prompt)
                for setting in SETTINGS:
                    parsed = official.post_process.post_process(task, setting, text)
                    theirs = bool(official.evaluation.evaluate_single_sample(task, parsed, label))
                    if question.id in quirky:
                        assert not theirs  # AGIEval's scorer never credits these rows
                        assert ours is (None if question.id == NO_LABEL else name in _FULL_SET_REPLIES)
                        continue
                    if (name, question.id) in AGIEVAL_ONLY:
                        assert not ours and theirs == (setting == "few-shot")
                        continue
                    tally = tallies.setdefault((name, setting), Tally())
                    tally.same += ours == theirs
                    tally.kaoshi_only += bool(ours and not theirs)
                    tally.official_only += bool(theirs and not ours)
    for name, _, relation, _ in (*CHOICE_REPLIES, *CLOZE_REPLIES):
        found = [tallies[(name, setting)] for setting in SETTINGS]
        where = f"{name!r} (zero-shot, few-shot): {found}"
        kaoshi_only, official_only = (sum(t.kaoshi_only for t in found), sum(t.official_only for t in found))
        if relation == SAME:
            assert kaoshi_only == official_only == 0, where
        elif relation == KAOSHI_READS:  # in one setting at least (few-shot, AGIEval reads some replies whole)
            assert official_only == 0 and kaoshi_only > 0, where
        else:
            assert kaoshi_only == 0 and official_only > 0, where


# The replies that give a quirky-label row's whole gold set in a form kaoshi reads.
_FULL_SET_REPLIES = {
    "bare",
    "答案是X",
    "答案是 X。",
    "base model continuing",
    "demo's list form",
    "English",
    "letters with 、",
    "echoing the prompt's ending",
    "English echo",
    "reasoning, then 故选",
    "think block",
    "full-width letter",
}


@pytest.mark.parametrize("reply", ["答案是B", " C", "答案是 ['A', 'C']"])
def test_a_run_scores_a_fixed_reply_as_agieval_does(
    loaded: LoadResult, official: Official, repo: Path, reply: str
) -> None:
    """Through kaoshi.evaluate (the runner's reading and grading), zero-shot."""
    result = kaoshi.evaluate(loaded, lambda prompt: reply)
    ours = {s.question_id: s.correct for s in result.samples}
    differences = []
    for task in AGIEVAL_TASKS:
        parsed = official.post_process.post_process(task, "zero-shot", reply)
        for index, schema in enumerate(official.dataset_loader.load_dataset_as_result_schema(task, v1(repo))):
            theirs = bool(official.evaluation.evaluate_single_sample(task, parsed, schema.label))
            question_id = f"{task}/{index}"
            if question_id == NO_LABEL:
                assert ours[question_id] is None and not theirs  # not graded; AGIEval counts it wrong
            elif question_id in (*TEXT_LABELS, STRAY_MARK):
                assert not theirs  # AGIEval never credits these; kaoshi does when the reply is the gold set
            elif ours[question_id] != theirs:
                differences.append((question_id, ours[question_id], theirs))
    if reply.startswith("答案是 ["):
        # A list on a single-choice question names two letters: kaoshi credits neither; AGIEval reads the
        # first capital, A. Multi-answer rows: both read {A, C}.
        assert differences and all(
            theirs and not ours_ and loaded.exam.question(question_id).type is QuestionType.SINGLE
            for question_id, ours_, theirs in differences
        )
    else:
        assert differences == []
