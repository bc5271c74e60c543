"""Fine-tuning the real small model (SmolLM2-135M via transformers) on CPU: a few LoRA steps on a tiny
split, resume from the checkpoint, the adapter lowers the training loss and changes log-likelihoods, and
the leakage guard holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kaoshi.cli.main import main
from kaoshi.store import Store

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def small_model() -> str:
    """SmolLM2 as a transformers folder: kaoshi's converted copy of the GGUF file (the same weights), as
    an `hf:` spec."""
    import torch

    from kaoshi.models import gguf_cache
    from kaoshi.models.base import ModelOptions
    from kaoshi.models.hf import load_causal_lm, smollm2_path

    load_causal_lm("smollm2", ModelOptions())  # converts the file once, if no copy exists yet
    folder = gguf_cache.cached(smollm2_path(), torch.float32)
    assert folder is not None
    return f"hf:{folder}"


def training_losses(spec: str, adapter: Path, train: Path) -> tuple[float, float]:
    """Mean answer-token loss over the whole training file (zero-shot prompts, as trained), dropout off:
    the base model's, then with the adapter merged in."""
    import torch

    from kaoshi.benchmarks import get_template, load_exam_result
    from kaoshi.finetune.examples import build_examples, pad_batch
    from kaoshi.finetune.train import answer_loss
    from kaoshi.models.base import ModelOptions
    from kaoshi.models.hf import apply_adapter, load_causal_lm

    tokenizer, model, _ = load_causal_lm(spec, ModelOptions())
    model.eval()
    exam = load_exam_result(None, str(train)).exam
    examples = build_examples(exam, get_template("qualbench-zero"), tokenizer, chat=True, shots=0)
    batch = {k: torch.tensor(v) for k, v in pad_batch(examples, tokenizer.pad_token_id).items()}
    with torch.inference_mode():
        before = float(answer_loss(model, batch))
        tuned = apply_adapter(model, str(adapter)).eval()
        return before, float(answer_loss(tuned, batch))


def test_finetune_resume_evaluate_and_guard(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, small_model: str
) -> None:
    split, adapter, store = tmp_path / "split", tmp_path / "adapter", str(tmp_path / "s.sqlite")
    assert main(["split", "--benchmark", "sample", "--train", "0.2", "--seed", "1", "--stratify", "type",
                 "-o", str(split)]) == 0  # fmt: skip
    train = split / "train.jsonl"
    tune = ["finetune", "--model", small_model, "--train", str(train), "--out", str(adapter),
            "--prompt", "qualbench-zero", "--batch-size", "3", "--lr", "3e-3",
            "--save-every", "1"]  # fmt: skip
    assert main([*tune, "--max-steps", "2"]) == 0
    assert (adapter / "checkpoints" / "step-2" / "optimizer.pt").is_file()
    assert main([*tune, "--max-steps", "4", "--resume"]) == 0  # continues at step 2
    err = capsys.readouterr().err
    assert "resumed at step 2" in err and "wrote adapter" in err
    manifest = json.loads((adapter / "kaoshi_adapter.json").read_text(encoding="utf-8"))
    assert manifest["steps"] == 4 and len(manifest["losses"]) == 4
    assert manifest["lora"] == {"r": 8, "alpha": 32, "dropout": 0.1, "target_modules": []}
    assert manifest["split"]["train_ratio"] == 0.2 and manifest["train"]["questions"] == 9

    before, after = training_losses(small_model, adapter, train)
    assert after < before - 0.1, (before, after)

    test = str(split / "test.jsonl")
    run = ["run", "--model", small_model, "--data", test, "--method", "loglik", "--limit-total", "3",
           "--prompt", "qualbench-zero", "--store", store]  # fmt: skip
    assert main([*run, "--run-name", "base"]) == 0
    assert main([*run, "--run-name", "tuned", "--adapter", str(adapter)]) == 0
    with Store(Path(store)) as opened:
        base, tuned = opened.samples("base"), opened.samples("tuned")
        spec = opened.get_run("tuned").spec
    assert spec.adapter["path"] == str(adapter) and spec.adapter["base"] == small_model
    assert (
        spec.adapter["train_fingerprint"] == manifest["train"]["fingerprint"] and spec.adapter["overlap"] == 0
    )
    changes = [
        abs(tuned_sample.logprobs[c] - base_sample.logprobs[c])  # type: ignore[index]
        for base_sample, tuned_sample in zip(base, tuned, strict=True)
        for c in base_sample.logprobs or {}
    ]
    assert changes and max(changes) > 0.01  # the adapter moves the log-likelihoods

    capsys.readouterr()
    leak = ["run", "--model", small_model, "--data", str(train), "--method", "loglik", "--limit-total", "1",
            "--adapter", str(adapter), "--store", store]  # fmt: skip
    assert main([*leak, "--run-name", "leak"]) == 2
    assert "were in the adapter's training data" in capsys.readouterr().err
    assert main([*leak, "--run-name", "leak", "--allow-overlap"]) == 0
    with Store(Path(store)) as opened:
        assert opened.get_run("leak").spec.adapter["overlap"] == 1  # the one question evaluated
    assert main(["compare", "base", "tuned", "--store", store]) == 0
    assert "Δ tuned vs base" in capsys.readouterr().out
