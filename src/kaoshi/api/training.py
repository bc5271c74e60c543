"""`kaoshi.finetune`: a LoRA adapter trained on a training split, for `kaoshi.evaluate(adapter=...)`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from kaoshi.errors import InputError
from kaoshi.finetune.lora import LoraSettings, parse_modules
from kaoshi.finetune.lora import describe as describe_modules
from kaoshi.finetune.train import FinetuneResult, StepLog, TrainSettings
from kaoshi.finetune.train import finetune as train_adapter
from kaoshi.models.base import ModelOptions
from kaoshi.models.registry import adapter_backends, spec_capabilities

__all__ = ["FinetuneResult", "LoraSettings", "StepLog", "describe_modules", "finetune", "parse_modules"]


def finetune(
    model: str,
    train: str | Path,
    out: str | Path,
    *,
    prompt: str = "qualbench",
    shots: int | None = None,
    chat: bool | None = None,
    epochs: int = 1,
    max_steps: int | None = None,
    batch_size: int = 4,
    learning_rate: float = 2e-4,
    max_length: int = 1024,
    with_explanation: bool = False,
    lora_r: int = 8,
    lora_alpha: int = 32,
    lora_dropout: float = 0.1,
    target_modules: Sequence[str] = (),
    save_every: int | None = None,
    gradient_checkpointing: bool = False,
    seed: int = 0,
    device: str = "auto",
    dtype: str = "auto",
    resume: bool = False,
    on_step: Callable[[StepLog], None] | None = None,
) -> FinetuneResult:
    """Train a peft LoRA adapter of a local transformers model (hf:, gguf:, smollm2) on `train` (a kaoshi
    JSONL exam, e.g. from `kaoshi.split_to_files`) with the exact evaluation prompts, the loss on the
    answer tokens; write it with its manifest (base, training data and content keys, settings, losses) to
    `out`. Needs `pip install 'kaoshi[hf,finetune]'`."""
    capabilities = spec_capabilities(model)
    if capabilities is None or not capabilities.adapters:
        raise InputError(
            f"finetune needs a local transformers model ({', '.join(adapter_backends())}), got {model!r}"
        )
    numbers = {"epochs": epochs, "batch_size": batch_size, "max_length": max_length}
    for name, value in {**numbers, "lora_r": lora_r, "lora_alpha": lora_alpha}.items():
        if value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be at least 1")
    if max_steps is not None and max_steps < 1:
        raise InputError("--max-steps must be at least 1")
    train_path, out_path = Path(train), Path(out)
    if not train_path.is_file():
        raise InputError(f"{train_path}: no such training file (make one with kaoshi split)")
    if out_path.exists() and any(out_path.iterdir()) and not resume:
        raise InputError(f"{out_path} is not empty: pass --resume to continue, or choose another --out")
    settings = TrainSettings(
        prompt=prompt,
        shots=shots,
        chat=chat,
        epochs=epochs,
        max_steps=max_steps,
        batch_size=batch_size,
        learning_rate=learning_rate,
        max_length=max_length,
        with_explanation=with_explanation,
        save_every=save_every,
        gradient_checkpointing=gradient_checkpointing,
        seed=seed,
        lora=LoraSettings(lora_r, lora_alpha, lora_dropout, tuple(target_modules)),
    )
    out_path.mkdir(parents=True, exist_ok=True)
    options = ModelOptions(seed=seed, device=device, dtype=dtype)
    return train_adapter(model, train_path, out_path, settings, options, resume=resume, on_step=on_step)
