"""Benchmarks from the Hugging Face hub through `datasets` (the `hf` extra). Offline -> one clear line."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from kaoshi.data.ceval import ceval_question
from kaoshi.data.ceval_subjects import CEVAL_SUBJECTS
from kaoshi.data.collect import LoadResult, QuestionCollector
from kaoshi.data.errors import DataError, RowError
from kaoshi.data.model import Exam, Question
from kaoshi.data.qualbench import qualbench_question

QUALBENCH_HUB_ID = "mengze-hong/QualBench"
CEVAL_HUB_ID = "ceval/ceval-exam"


def _load_dataset() -> Callable[..., Any]:
    try:
        module = importlib.import_module("datasets")
    except ImportError:
        raise DataError(
            "loading from the Hugging Face hub needs the 'datasets' package: pip install 'kaoshi[hub]' "
            "(or pass --data PATH to a downloaded copy)"
        ) from None
    load: Callable[..., Any] = module.load_dataset
    return load


def _fetch(hub_id: str, **kwargs: Any) -> Any:
    load = _load_dataset()
    try:
        return load(hub_id, **kwargs)
    except Exception as exc:  # datasets raises many types for network and cache failures
        raise DataError(
            f"could not load {hub_id!r} from the Hugging Face hub ({type(exc).__name__}: {exc}); "
            "offline? download the data and pass --data PATH"
        ) from exc


def load_qualbench_hub(hub_id: str = QUALBENCH_HUB_ID) -> LoadResult:
    dataset = _fetch(hub_id)
    collector = QuestionCollector(f"hf://{hub_id}")
    for split_name in dataset:
        for index, record in enumerate(dataset[split_name]):
            collector.add(index + 1, partial(qualbench_question, dict(record), collector.file, None))
    exam = Exam("qualbench", tuple(collector.questions), metadata={"benchmark": "qualbench", "path": hub_id})
    return LoadResult(exam, tuple(collector.errors))


def load_ceval_hub(
    split: str, subjects: Iterable[str] | None = None, hub_id: str = CEVAL_HUB_ID, name: str = "ceval"
) -> LoadResult:
    chosen = list(subjects) if subjects else list(CEVAL_SUBJECTS)
    questions: list[Question] = []
    fewshot: list[Question] = []
    collector_errors: list[RowError] = []
    for subject in chosen:
        wanted = [(split, questions)] + ([("dev", fewshot)] if split != "dev" else [])
        for split_name, sink in wanted:
            rows = _fetch(hub_id, name=subject, split=split_name)
            collector = QuestionCollector(f"hf://{hub_id}/{subject}/{split_name}")
            for index, record in enumerate(rows):
                parse = partial(ceval_question, dict(record), subject, split_name, collector.file, None)
                collector.add(index + 1, parse)
            sink.extend(collector.questions)
            collector_errors.extend(collector.errors)
    exam = Exam(name, tuple(questions), tuple(fewshot), {"benchmark": name, "path": hub_id, "split": split})
    return LoadResult(exam, tuple(collector_errors))
