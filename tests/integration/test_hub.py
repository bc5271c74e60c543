"""Hub ids load through `datasets`; without it, or offline, one clear line says what to do."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from kaoshi.benchmarks import load_exam_result
from kaoshi.data import DataError


def fake_datasets(monkeypatch: pytest.MonkeyPatch, load: Any) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []

    def load_dataset(hub_id: str, **kwargs: Any) -> Any:
        calls.append((hub_id, kwargs))
        return load(hub_id, **kwargs)

    module = types.ModuleType("datasets")
    module.load_dataset = load_dataset  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets", module)
    return calls


def test_missing_datasets_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(DataError) as info:
        load_exam_result("qualbench")
    assert str(info.value) == (
        "loading from the Hugging Face hub needs the 'datasets' package: pip install 'kaoshi[hub]' "
        "(or pass --data PATH to a downloaded copy)"
    )


def test_offline_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(hub_id: str, **kwargs: Any) -> Any:
        raise ConnectionError("Couldn't reach 'mengze-hong/QualBench' on the Hub (LocalEntryNotFoundError)")

    fake_datasets(monkeypatch, offline)
    with pytest.raises(DataError) as info:
        load_exam_result("qualbench")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(
        "could not load 'mengze-hong/QualBench' from the Hugging Face hub (ConnectionError"
    )
    assert message.endswith("offline? download the data and pass --data PATH")


def test_qualbench_from_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [
        {
            "idx": 1,
            "question_type": "单选题",
            "domain": "消防",
            "question": "q\nA．a\nB．b",
            "answer": "B",
            "explanation": "",
        }
    ]
    calls = fake_datasets(monkeypatch, lambda hub_id, **kw: {"train": rows})
    exam = load_exam_result("qualbench").exam
    assert calls == [("mengze-hong/QualBench", {})]
    assert exam.questions[0].answer == frozenset("B")


def test_ceval_from_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    def load(hub_id: str, name: str, split: str) -> list[dict[str, Any]]:
        return [
            {
                "id": 0,
                "question": f"{name} {split}",
                "A": "1",
                "B": "2",
                "C": "3",
                "D": "4",
                "answer": "" if split == "test" else "A",
                "explanation": "",
            }
        ]

    calls = fake_datasets(monkeypatch, load)
    exam = load_exam_result("ceval", split="val", subjects=["law"]).exam
    assert calls == [
        ("ceval/ceval-exam", {"name": "law", "split": "val"}),
        ("ceval/ceval-exam", {"name": "law", "split": "dev"}),
    ]
    assert exam.questions[0].id == "law/0" and exam.fewshot[0].split == "dev"
    hard = load_exam_result("ceval-hard", split="test").exam
    assert len(hard) == 8 and all(q.answer is None for q in hard.questions)
