"""CMMLU against haonan-li/CMMLU itself (KAOSHI_REALDATA/CMMLU): kaoshi loads every row of data/test with
data/dev as the exemplars, and its `cmmlu` / `cmmlu-cot` prompts are, byte for byte, what the official
code builds from the same files, on every row, zero- and five-shot.

The official code runs as published: `src/mp_utils.py` (format_example, gen_prompt) on the frames pandas
reads as its run_eval reads them, and `src/chatgpt.py`'s eval for the chat form, with stand-ins only for
what is not installed or reaches the network: `openai` (a chat client that records the messages it is
sent) and `tiktoken` (a tokenizer of one token per character; its API script keeps every exemplar either
way: the longest five-shot prompt has 2,127 UTF-8 bytes, under its 4,096-token limit in any tokenizer).
The drop of too long exemplars is compared with that one-token-per-character tokenizer too, the one case
where kaoshi's measure (characters) and the official one (tokens) agree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pandas as pd  # before the official code, which would otherwise be the one to load it
import pytest

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.benchmarks.cmmlu.subjects import CMMLU_SUBJECTS
from kaoshi.data.model import Exam, Question
from kaoshi.prompts import RenderOptions, render_fitting
from tests.realdata.compare import RecordingChat, as_dicts, first_differences, stand_ins
from tests.realdata.conftest import official_code, repository

TEST_ROWS = 11_582
DEV_ROWS = 335
SUBJECTS = 67
SHOTS = (0, 5)


def characters(text: str) -> list[str]:
    """A tokenizer of one token per character."""
    return list(text)


@pytest.fixture(scope="module")
def cmmlu() -> Path:
    return repository("CMMLU")


@pytest.fixture(scope="module")
def official(cmmlu: Path) -> SimpleNamespace:
    """mp_utils and chatgpt.py from the repository, the chat client chatgpt.py talks to, and the frames."""
    chat = RecordingChat()
    tiktoken = ModuleType("tiktoken")
    tiktoken.encoding_for_model = lambda name: SimpleNamespace(encode=characters)  # type: ignore[attr-defined]
    with official_code(cmmlu / "src"), stand_ins(openai=chat.openai_module(), tiktoken=tiktoken):
        import chatgpt  # type: ignore[import-not-found]
        import mp_utils  # type: ignore[import-not-found]
    frames = {}
    for subject in sorted(path.stem for path in (cmmlu / "data" / "test").glob("*.csv")):
        # As run_eval reads them.
        dev = pd.read_csv(cmmlu / "data" / "dev" / f"{subject}.csv", header=0, index_col=0)
        test = pd.read_csv(cmmlu / "data" / "test" / f"{subject}.csv", header=0, index_col=0)
        frames[subject] = (dev, test)
    return SimpleNamespace(mp_utils=mp_utils, chatgpt=chatgpt, chat=chat, frames=frames)


@pytest.fixture(scope="module")
def exam(cmmlu: Path) -> Exam:
    loaded = load_exam_result("cmmlu", cmmlu)  # the defaults: the test split, dev as the exemplars
    assert not loaded.errors and not loaded.warnings
    return loaded.exam


def by_subject(exam: Exam) -> dict[str, list[Question]]:
    grouped: dict[str, list[Question]] = {}
    for question in exam.questions:
        grouped.setdefault(question.subject or "", []).append(question)
    return grouped


def test_every_row_loads(exam: Exam, official: SimpleNamespace) -> None:
    assert len(exam.questions) == TEST_ROWS and len(exam.fewshot) == DEV_ROWS
    grouped = by_subject(exam)
    assert len(grouped) == SUBJECTS and set(grouped) == set(CMMLU_SUBJECTS) == set(official.frames)
    assert {s: len(qs) for s, qs in grouped.items()} == {s: len(t) for s, (_, t) in official.frames.items()}
    assert Counter(q.subject for q in exam.fewshot) == {s: len(d) for s, (d, _) in official.frames.items()}
    # Every subject's Chinese name is the one the official header uses.
    assert {s: info.chinese for s, info in CMMLU_SUBJECTS.items()} == official.mp_utils.name_en2zh


@pytest.mark.parametrize("cot", [False, True], ids=["answer-only", "cot"])
@pytest.mark.parametrize("shots", SHOTS)
def test_completion_prompt_is_gen_prompts_on_every_row(
    exam: Exam, official: SimpleNamespace, cot: bool, shots: int
) -> None:
    template = get_template("cmmlu-cot" if cot else "cmmlu")
    mp_utils = official.mp_utils

    def pairs() -> Iterator[tuple[str, object, object]]:
        for subject, questions in by_subject(exam).items():
            dev, test = official.frames[subject]
            for i, question in enumerate(questions):
                end = mp_utils.format_example(test, i, subject, include_answer=False, cot=cot)
                expected = mp_utils.gen_prompt(dev, subject, end, shots, cot=cot)
                yield question.id, expected, template.render(question, exam, RenderOptions(shots)).text

    compared, differing = first_differences(pairs())
    assert compared == TEST_ROWS
    assert not differing, "\n".join(differing)


@pytest.mark.parametrize("cot", [False, True], ids=["answer-only", "cot"])
@pytest.mark.parametrize("shots", SHOTS)
def test_chat_prompt_is_what_chatgpt_py_sends(
    exam: Exam, official: SimpleNamespace, cot: bool, shots: int
) -> None:
    template = get_template("cmmlu-cot" if cot else "cmmlu")

    def pairs() -> Iterator[tuple[str, object, object]]:
        for subject, questions in by_subject(exam).items():
            dev, test = official.frames[subject]
            official.chat.sent.clear()
            # As chatgpt.py's main calls it (its --max_length defaults to 4,096).
            official.chatgpt.eval(subject, dev, test, shots, 4096, cot)
            assert len(official.chat.sent) == len(questions)
            for question, sent in zip(questions, official.chat.sent, strict=True):
                prompt = template.render(question, exam, RenderOptions(shots, chat=True))
                yield question.id, sent, as_dicts(prompt.messages)

    compared, differing = first_differences(pairs())
    assert compared == TEST_ROWS
    assert not differing, "\n".join(differing)


# Limits in tokens of one character -> (five-shot prompts that lose exemplars under it, prompts too long
# even without exemplars).
DROPS = {600: (1674, 5), 900: (42, 2)}


@pytest.mark.parametrize("limit", sorted(DROPS))
def test_too_long_a_prompt_loses_the_longest_exemplars_as_gen_prompt_drops_them(
    exam: Exam, official: SimpleNamespace, limit: int
) -> None:
    template = get_template("cmmlu")
    mp_utils = official.mp_utils
    tokenizer = SimpleNamespace(encode=characters)
    # gen_prompt keeps exemplars while header, exemplars and question come to fewer than `limit` tokens.
    fits: Callable[[Any], bool] = lambda prompt: len(prompt.text) < limit  # noqa: E731
    dropped = header_dropped = 0

    def pairs() -> Iterator[tuple[str, object, object]]:
        nonlocal dropped, header_dropped
        for subject, questions in by_subject(exam).items():
            dev, test = official.frames[subject]
            for i, question in enumerate(questions):
                end = mp_utils.format_example(test, i, subject, include_answer=False)
                expected = mp_utils.gen_prompt(dev, subject, end, 5, tokenizer, limit)
                got = render_fitting(template, question, exam, RenderOptions(5), fits)
                if expected == end:
                    # The documented difference: even zero-shot does not fit, and the official code
                    # drops the header; kaoshi keeps it (the model then reports the question too long).
                    header_dropped += 1
                    assert got.shots == 0 and got.text.endswith(end) and got.text != end
                    continue
                dropped += got.shots < 5
                yield question.id, expected, got.text

    compared, differing = first_differences(pairs())
    assert not differing, "\n".join(differing)
    assert compared + header_dropped == TEST_ROWS
    # The limit bites (the comparison covers the drop, not only whole prompts), and few rows are too long
    # even without exemplars.
    assert (dropped, header_dropped) == DROPS[limit]
