"""C-Eval's prompts against hkust-nlp/ceval's own code (KAOSHI_REALDATA/ceval,
code/evaluator_series/evaluators), on real rows in C-Eval's layout: the C-Eval data is not in that
repository, so the rows are FinEval's academic data (KAOSHI_REALDATA/FinEval-v1: dev/ and val/
`{subject}_{split}.csv`, C-Eval's columns), and CMMLU's rows (KAOSHI_REALDATA/CMMLU) written in C-Eval's
layout in a temporary folder.

What each kaoshi form is compared with (the official code, run as published on the frames pandas reads as
eval.py reads them):
- completion: `llama.py`'s LLaMA_Evaluator, `generate_few_shot_prompt(subject, dev, cot)` +
  `format_example(row, include_answer=False, cot)`, as its eval_subject joins them. Zero-shot is the
  README's zero-shot prompt, the header and the question, which is `generate_few_shot_prompt` with k=0:
  llama.py's own zero-shot branch adds a list and a string (`[] + question`) and fails.
- chat: `chatgpt.py`'s ChatGPT_Evaluator.eval_subject itself, called as eval.py calls it (zero-shot without
  `cot`: its zero-shot chat prompt is the same with or without CoT), with a stand-in `openai` that records
  the messages; compared message by message, roles and contents.
{科目} is the subject's Chinese name in the preset's table (FinEval's for `fineval`, C-Eval's for `ceval-*`,
the file's subject where the table has no entry); eval.py passes the file's subject, a known slip of the
released script that the README's prompt does not have. Stand-ins: `openai` (chat client) and
`torch` (llama.py uses it to run the model, never to build a prompt).
"""

from __future__ import annotations

import csv
import json
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pandas as pd  # before the official code, which would otherwise be the one to load it
import pytest

from kaoshi.benchmarks import get_template
from kaoshi.benchmarks.ceval.loader import CEVAL_STYLE, CevalStyle, load_ceval_layout
from kaoshi.benchmarks.ceval.prompts import CEVAL_NAMES
from kaoshi.benchmarks.fineval.benchmark import FINEVAL_STYLE
from kaoshi.benchmarks.fineval.prompts import FINEVAL_NAMES
from kaoshi.data.model import Exam, Question
from kaoshi.prompts import RenderOptions
from tests.realdata.compare import RecordingChat, as_dicts, first_differences, stand_ins
from tests.realdata.conftest import official_code, repository

CHOICES = ["A", "B", "C", "D"]
SHOTS = (0, 5)
FINEVAL_VAL_ROWS = 3_340
FINEVAL_DEV_ROWS = 170
FINEVAL_SUBJECTS = 34
CMMLU_ROWS = 11_582
# preset -> (CoT, the subject table its header names subjects from)
PRESETS: Mapping[str, tuple[bool, Mapping[str, str]]] = {
    "fineval": (False, FINEVAL_NAMES),
    "fineval-cot": (True, FINEVAL_NAMES),
    "ceval-answer-only": (False, CEVAL_NAMES),
    "ceval-cot": (True, CEVAL_NAMES),
}


@pytest.fixture(scope="module")
def official() -> SimpleNamespace:
    """llama.py's and chatgpt.py's evaluator classes, and the chat client chatgpt.py talks to."""
    code = repository("ceval") / "code" / "evaluator_series"
    chat = RecordingChat()
    # torch stands in even where it is installed: leaving official_code unloads what the block loaded,
    # and torch cannot be loaded twice in one process.
    stand_in = stand_ins(openai=chat.openai_module(), torch=ModuleType("torch"))
    with official_code(code), stand_in, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # llama.py's regular expressions: invalid escapes like '\s'
        from evaluators.chatgpt import ChatGPT_Evaluator  # type: ignore[import-not-found]
        from evaluators.llama import LLaMA_Evaluator  # type: ignore[import-not-found]
    return SimpleNamespace(chat_evaluator=ChatGPT_Evaluator, completion_evaluator=LLaMA_Evaluator, chat=chat)


@pytest.fixture(scope="module")
def fineval() -> Path:
    return repository("FinEval-v1")


@pytest.fixture(scope="module")
def fineval_exam(fineval: Path) -> Exam:
    loaded = load_ceval_layout(fineval, "val", FINEVAL_STYLE)
    assert not loaded.errors and not loaded.warnings
    return loaded.exam


@pytest.fixture(scope="module")
def cmmlu_as_ceval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """CMMLU's rows in C-Eval's layout: data/dev -> dev/{subject}_dev.csv, data/test ->
    val/{subject}_val.csv, columns id,question,A,B,C,D,answer, every cell as the file has it."""
    source = repository("CMMLU") / "data"
    root = tmp_path_factory.mktemp("cmmlu-as-ceval")
    for split, target in (("dev", "dev"), ("test", "val")):
        (root / target).mkdir()
        for path in sorted((source / split).glob("*.csv")):
            with path.open(encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f))[1:]
            with (root / target / f"{path.stem}_{target}.csv").open("w", encoding="utf-8", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(["id", "question", *CHOICES, "answer"])
                writer.writerows(rows)
    return root


def by_subject(exam: Exam) -> dict[str, list[Question]]:
    grouped: dict[str, list[Question]] = {}
    for question in exam.questions:
        grouped.setdefault(question.subject or "", []).append(question)
    return grouped


def frames(root: Path, subject: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(dev, val) as eval.py reads them."""
    return pd.read_csv(root / "dev" / f"{subject}_dev.csv"), pd.read_csv(root / "val" / f"{subject}_val.csv")


def completion_pairs(
    official: SimpleNamespace, root: Path, exam: Exam, preset: str, shots: int
) -> Iterator[tuple[str, object, object]]:
    cot, names = PRESETS[preset]
    template = get_template(preset)
    for subject, questions in by_subject(exam).items():
        dev, val = frames(root, subject)
        evaluator = official.completion_evaluator(model=None, tokenizer=None, choices=CHOICES, k=shots)
        few_shot = evaluator.generate_few_shot_prompt(names.get(subject, subject), dev, cot=cot)
        assert len(val) == len(questions)
        for (_, row), question in zip(val.iterrows(), questions, strict=True):
            expected = few_shot + evaluator.format_example(row, include_answer=False, cot=cot)
            yield question.id, expected, template.render(question, exam, RenderOptions(shots)).text


def chat_pairs(
    official: SimpleNamespace, root: Path, exam: Exam, preset: str, shots: int
) -> Iterator[tuple[str, object, object]]:
    cot, names = PRESETS[preset]
    template = get_template(preset)
    for subject, questions in by_subject(exam).items():
        dev, val = frames(root, subject)
        evaluator = official.chat_evaluator(CHOICES, shots, "no key", "gpt-3.5-turbo")
        official.chat.sent.clear()
        if shots:
            evaluator.eval_subject(names.get(subject, subject), val, dev, few_shot=True, cot=cot)
        else:
            evaluator.eval_subject(names.get(subject, subject), val, few_shot=False)
        assert len(official.chat.sent) == len(questions)
        for sent, question in zip(official.chat.sent, questions, strict=True):
            prompt = template.render(question, exam, RenderOptions(shots, chat=True))
            yield question.id, sent, as_dicts(prompt.messages)


def test_fineval_rows_load(fineval_exam: Exam) -> None:
    assert len(fineval_exam.questions) == FINEVAL_VAL_ROWS and len(fineval_exam.fewshot) == FINEVAL_DEV_ROWS
    assert len(by_subject(fineval_exam)) == FINEVAL_SUBJECTS


def test_fineval_names_are_fineval_s_subject_mapping() -> None:
    code = repository("FinEval") / "code"
    for mapping_file in sorted(code.glob("*/1*academic_eval/code/subject_mapping.json")):
        mapping = json.loads(mapping_file.read_text(encoding="utf-8"))
        assert {subject: names[1] for subject, names in mapping.items()} == dict(FINEVAL_NAMES)


@pytest.mark.parametrize("shots", SHOTS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_completion_prompt_on_fineval_rows(
    official: SimpleNamespace, fineval: Path, fineval_exam: Exam, preset: str, shots: int
) -> None:
    compared, differing = first_differences(completion_pairs(official, fineval, fineval_exam, preset, shots))
    assert compared == FINEVAL_VAL_ROWS
    assert not differing, "\n".join(differing)


@pytest.mark.parametrize("shots", SHOTS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_chat_messages_on_fineval_rows(
    official: SimpleNamespace, fineval: Path, fineval_exam: Exam, preset: str, shots: int
) -> None:
    compared, differing = first_differences(chat_pairs(official, fineval, fineval_exam, preset, shots))
    assert compared == FINEVAL_VAL_ROWS
    assert not differing, "\n".join(differing)


def load_cmmlu_as_ceval(root: Path, style: CevalStyle = CEVAL_STYLE) -> Exam:
    loaded = load_ceval_layout(root, "val", style)
    assert not loaded.errors  # warnings: CMMLU's subjects are not C-Eval's
    return loaded.exam


@pytest.mark.parametrize("shots", SHOTS)
def test_answer_only_on_cmmlu_rows_in_ceval_layout(
    official: SimpleNamespace, cmmlu_as_ceval: Path, shots: int
) -> None:
    # CMMLU has no explanations: answer-only only (the official CoT exemplar reads a missing column).
    exam = load_cmmlu_as_ceval(cmmlu_as_ceval)
    for pairs in (completion_pairs, chat_pairs):
        compared, differing = first_differences(
            pairs(official, cmmlu_as_ceval, exam, "ceval-answer-only", shots)
        )
        assert compared == CMMLU_ROWS
        assert not differing, "\n".join(differing)
