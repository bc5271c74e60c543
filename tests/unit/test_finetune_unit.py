"""Fine-tuning pieces that need no model: training examples (loss only on the answer), LoRA targets, the
adapter manifest's leakage guard, and the command's checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.cli.main import main
from kaoshi.data.shuffle import shuffle_question
from kaoshi.data.split import content_key
from kaoshi.finetune.adapter import ADAPTER_MANIFEST, AdapterError, check_overlap
from kaoshi.finetune.examples import IGNORE, build_examples, pad_batch, target_text
from kaoshi.finetune.lora import LoraSettings

EXAM = load_exam_result("sample").exam


class CharTokenizer:
    """One token per character; `<` + role + `>` markers for the chat template."""

    eos_token_id = 0
    chat_template = "fake"

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        return {"input_ids": ([1] if add_special_tokens else []) + [ord(c) for c in text]}

    def apply_chat_template(
        self, messages: list[dict[str, str]], tokenize: bool, add_generation_prompt: bool
    ) -> str:
        text = "".join(f"<{m['role']}>{m['content']}" for m in messages)
        return text + ("<assistant>" if add_generation_prompt else "")


def decode(ids: list[int]) -> str:
    return "".join(chr(i) for i in ids if i > 1)


@pytest.mark.parametrize("chat", [False, True])
def test_the_loss_falls_on_the_answer_only(chat: bool) -> None:
    examples = build_examples(EXAM, get_template("qualbench"), CharTokenizer(), chat=chat, shots=1)
    assert len(examples) == len(EXAM.questions)
    by_id = {q.id: q for q in EXAM.questions}
    for example in examples:
        question = by_id[example.question_id]
        answer = [label for label in example.labels if label != IGNORE]
        assert decode(answer) == target_text(question, False) and answer[-1] == 0  # answer, then EOS
        context = decode(example.input_ids[: len(example.input_ids) - len(answer)])
        assert context.endswith("答案：") and question.stem[:10] in context
        assert ("<assistant>" in context) == chat


def test_explanations_and_truncation() -> None:
    question = next(q for q in EXAM.questions if q.type.is_choice and q.explanation)
    assert target_text(question, True).endswith(question.explanation.strip())
    (example,) = build_examples(
        type(EXAM)(EXAM.name, (question,), EXAM.fewshot), get_template("qualbench"), CharTokenizer(),
        chat=False, shots=1, max_length=40,
    )  # fmt: skip
    assert len(example.input_ids) == 40 and decode([x for x in example.labels if x != IGNORE]) == target_text(
        question, False
    )
    with pytest.raises(ValueError, match="exceeds --max-length"):
        build_examples(type(EXAM)("x", (question,)), get_template("qualbench"), CharTokenizer(), chat=False,
                       shots=0, max_length=2)  # fmt: skip


def test_batches_pad_without_adding_loss() -> None:
    examples = build_examples(EXAM, get_template("qualbench-zero"), CharTokenizer(), chat=False, shots=0)[:3]
    batch = pad_batch(examples, pad_id=7)
    width = max(len(e.input_ids) for e in examples)
    for row, example in zip(range(3), examples, strict=True):
        pad = width - len(example.input_ids)
        assert batch["input_ids"][row][len(example.input_ids) :] == [7] * pad
        assert sum(batch["attention_mask"][row]) == len(example.input_ids)
        assert sum(label != IGNORE for label in batch["labels"][row]) == example.target_tokens


def test_lora_targets_per_architecture() -> None:
    settings = LoraSettings()
    assert (settings.r, settings.alpha, settings.dropout) == (8, 32, 0.1)  # the paper's defaults
    assert settings.modules_for("llama") == ["q_proj", "k_proj", "v_proj", "o_proj"]
    assert settings.modules_for("gpt2") == ["c_attn"]
    assert settings.modules_for("something-new") is None  # peft decides
    assert LoraSettings(target_modules=("q_proj",)).modules_for("llama") == ["q_proj"]


def write_manifest(folder: Path, questions: list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "base": "smollm2",
        "train": {"content_keys": [content_key(q) for q in questions], "questions": 2},
    }
    (folder / ADAPTER_MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_the_guard_finds_training_questions_even_shuffled(tmp_path: Path) -> None:
    trained = list(EXAM.questions[:2])
    adapter = write_manifest(tmp_path / "adapter", trained)
    manifest, overlap = check_overlap(adapter, EXAM.questions[2:], allow=False)
    assert overlap == 0 and manifest["base"] == "smollm2"
    disguised = [shuffle_question(q, 1) for q in EXAM.questions[:3]]
    with pytest.raises(AdapterError, match="2 evaluated question"):
        check_overlap(adapter, disguised, allow=False)
    assert check_overlap(adapter, disguised, allow=True)[1] == 2
    with pytest.raises(AdapterError, match="is missing"):
        check_overlap(tmp_path, EXAM.questions, allow=False)


def test_run_refuses_leaks_before_loading_any_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    adapter = write_manifest(tmp_path / "adapter", list(EXAM.questions[:3]))
    store = str(tmp_path / "s.sqlite")
    assert main(["run", "--benchmark", "sample", "--model", "smollm2", "--adapter", str(adapter),
                 "--store", store]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "3 evaluated question(s) were in the adapter's training data" in err and "--allow-overlap" in err
    assert main(["run", "--benchmark", "sample", "--model", "random", "--adapter", str(adapter),
                 "--store", store]) == 2  # fmt: skip
    assert "needs a local transformers model" in capsys.readouterr().err
    assert (
        main(["run", "--benchmark", "sample", "--model", "random", "--allow-overlap", "--store", store]) == 2
    )
    assert "--allow-overlap is for runs with --adapter" in capsys.readouterr().err


def test_finetune_command_checks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    train = tmp_path / "train.jsonl"
    assert (
        main(["finetune", "--model", "openai:gpt-4o", "--train", str(train), "--out", str(tmp_path / "a")])
        == 2
    )
    assert "local transformers model" in capsys.readouterr().err
    assert main(["finetune", "--model", "smollm2", "--train", str(train), "--out", str(tmp_path / "a")]) == 2
    assert "no such training file" in capsys.readouterr().err
    train.write_text("", encoding="utf-8")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x", encoding="utf-8")
    assert (
        main(["finetune", "--model", "smollm2", "--train", str(train), "--out", str(tmp_path / "full")]) == 2
    )
    assert "is not empty" in capsys.readouterr().err
