"""The LoRA training loop: a plain PyTorch loop over the exam's training questions, loss on the answer
tokens, checkpoints that resume exactly where they stopped, and the adapter with its manifest at the end.

Batches follow a fixed order per (seed, epoch), so a resumed run sees the batches the interrupted one
would have seen; the checkpoint keeps the adapter, the optimizer and the step.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kaoshi.benchmarks import get_template, load_exam_result
from kaoshi.data.model import Exam, Question
from kaoshi.data.split import content_key
from kaoshi.errors import InputError
from kaoshi.finetune.adapter import ADAPTER_MANIFEST
from kaoshi.finetune.examples import IGNORE, TrainingExample, build_examples, pad_batch
from kaoshi.finetune.lora import LoraSettings, lora_config
from kaoshi.models.base import ModelError, ModelOptions
from kaoshi.models.hf import load_causal_lm
from kaoshi.version import __version__

CHECKPOINTS = "checkpoints"
KEEP_CHECKPOINTS = 2


@dataclass(frozen=True)
class TrainSettings:
    prompt: str = "qualbench"
    shots: int | None = None  # None: the template's default
    chat: bool | None = None  # None: the tokenizer's chat template decides, as in kaoshi run
    epochs: int = 1
    max_steps: int | None = None
    batch_size: int = 4
    learning_rate: float = 2e-4
    max_length: int = 1024
    with_explanation: bool = False
    save_every: int | None = None  # steps between checkpoints (None: at the end of each epoch)
    gradient_checkpointing: bool = False  # recompute activations in the backward pass: less memory, slower
    full_logits: bool = False  # the library's loss over every position (only to measure the saving)
    seed: int = 0
    lora: LoraSettings = field(default_factory=LoraSettings)


@dataclass(frozen=True)
class StepLog:
    step: int
    total: int
    loss: float
    seconds: float


@dataclass(frozen=True)
class FinetuneResult:
    out: Path
    steps: int
    resumed_from: int
    losses: list[float]
    seconds: float
    peak_rss_mib: float
    trainable_parameters: int
    examples: int


def _latest_checkpoint(out: Path) -> Path | None:
    folder = out / CHECKPOINTS
    found = sorted(folder.glob("step-*"), key=lambda p: int(p.name.split("-")[1])) if folder.is_dir() else []
    return found[-1] if found else None


def _order(n: int, seed: int, epoch: int) -> list[int]:
    order = list(range(n))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return order


def _peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def finetune(
    model_spec: str,
    train_file: Path,
    out: Path,
    settings: TrainSettings,
    options: ModelOptions,
    *,
    resume: bool = False,
    on_step: Callable[[StepLog], None] | None = None,
) -> FinetuneResult:
    try:
        import torch
        from peft import get_peft_model, set_peft_model_state_dict
        from safetensors.torch import load_file
    except ImportError as exc:
        raise ModelError(
            f"kaoshi finetune needs {exc.name or 'peft'}: "
            "pip install torch==2.13.0 && pip install 'kaoshi[hf,finetune]'"
        ) from None

    started = time.perf_counter()
    exam = load_exam_result(None, str(train_file)).exam
    template = get_template(settings.prompt)
    tokenizer, base, device = load_causal_lm(model_spec, options)
    chat = bool(getattr(tokenizer, "chat_template", None)) if settings.chat is None else settings.chat
    shots = template.default_shots if settings.shots is None else settings.shots
    examples = build_examples(
        exam,
        template,
        tokenizer,
        chat=chat,
        shots=shots,
        with_explanation=settings.with_explanation,
        max_length=settings.max_length,
    )
    if not examples:
        raise InputError(f"{train_file}: no questions with answers to train on")
    torch.manual_seed(settings.seed)
    model_type = str(getattr(base.config, "model_type", ""))
    if settings.gradient_checkpointing:
        base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        base.enable_input_require_grads()
    model = get_peft_model(base, lora_config(settings.lora, model_type))
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    optimizer = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate
    )

    per_epoch = -(-len(examples) // settings.batch_size)
    total = settings.max_steps or settings.epochs * per_epoch
    step, losses = 0, []
    checkpoint = _latest_checkpoint(out) if resume else None
    if checkpoint is not None:
        state = json.loads((checkpoint / "state.json").read_text(encoding="utf-8"))
        set_peft_model_state_dict(model, load_file(str(checkpoint / "adapter_model.safetensors")))
        optimizer.load_state_dict(torch.load(checkpoint / "optimizer.pt", weights_only=True))
        step, losses = int(state["step"]), list(state["losses"])
        torch.manual_seed(settings.seed + step)
    resumed_from = step
    save_every = settings.save_every or per_epoch
    pad = tokenizer.pad_token_id
    model.train()
    while step < total:
        epoch, position = divmod(step, per_epoch)
        order = _order(len(examples), settings.seed, epoch)
        batch_examples: list[TrainingExample] = [
            examples[i] for i in order[position * settings.batch_size : (position + 1) * settings.batch_size]
        ]
        batch = {k: torch.tensor(v, device=device) for k, v in pad_batch(batch_examples, pad).items()}
        tick = time.perf_counter()
        loss = model(**batch).loss if settings.full_logits else answer_loss(model, batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        losses.append(float(loss.detach()))
        if on_step is not None:
            on_step(StepLog(step, total, losses[-1], time.perf_counter() - tick))
        if step % save_every == 0 or step == total:  # the last one lets --resume --max-steps go further
            _save_checkpoint(model, optimizer, out, step, losses)
    model.save_pretrained(str(out))
    result = FinetuneResult(
        out,
        step,
        resumed_from,
        losses,
        time.perf_counter() - started,
        _peak_rss_mib(),
        trainable,
        len(examples),
    )
    _write_manifest(out, model_spec, train_file, exam.questions, settings, result, chat, shots, model_type)
    return result


def answer_loss(model: Any, batch: dict[str, Any]) -> Any:
    """Mean cross-entropy over the answer tokens, with the LM head applied only at the positions that
    predict them (`logits_to_keep` with explicit indices). Equal to the library's own loss with these
    labels, but a prompt of a thousand tokens no longer costs a thousand vocabulary-sized rows."""
    import torch
    import torch.nn.functional as F

    labels = batch["labels"]
    targets = labels[:, 1:] != IGNORE  # position p predicts token p + 1
    keep = torch.nonzero(targets.any(dim=0)).flatten()
    logits = model(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], logits_to_keep=keep
    ).logits  # (batch, kept positions, vocabulary)
    wanted = labels[:, keep + 1]
    return F.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), wanted.reshape(-1), ignore_index=IGNORE
    )


def _save_checkpoint(model: Any, optimizer: Any, out: Path, step: int, losses: list[float]) -> None:
    import torch

    folder = out / CHECKPOINTS / f"step-{step}"
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(str(partial))
    torch.save(optimizer.state_dict(), partial / "optimizer.pt")
    (partial / "state.json").write_text(json.dumps({"step": step, "losses": losses}), encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)  # a checkpoint exists whole or not at all
    older = sorted((out / CHECKPOINTS).glob("step-*"), key=lambda p: int(p.name.split("-")[1]))
    for stale in older[:-KEEP_CHECKPOINTS]:
        if not stale.name.endswith(".partial"):
            shutil.rmtree(stale, ignore_errors=True)


def _write_manifest(
    out: Path,
    model_spec: str,
    train_file: Path,
    questions: Sequence[Question],
    settings: TrainSettings,
    result: FinetuneResult,
    chat: bool,
    shots: int,
    model_type: str,
) -> None:
    split_manifest = train_file.parent / "manifest.json"
    split = json.loads(split_manifest.read_text(encoding="utf-8")) if split_manifest.is_file() else None
    trained = [q for q in questions if q.answer is not None]
    manifest = {
        "kind": "kaoshi-adapter",
        "kaoshi_version": __version__,
        "base": model_spec,
        "model_type": model_type,
        "train": {
            "file": str(train_file),
            "questions": len(trained),
            "fingerprint": Exam("", tuple(trained)).fingerprint,
            "content_keys": sorted(content_key(q) for q in trained),
        },
        "split": None
        if split is None
        else {k: split[k] for k in ("source", "seed", "train_ratio", "stratify")},
        "prompt": settings.prompt,
        "shots": shots,
        "chat": chat,
        "settings": {k: v for k, v in asdict(settings).items() if k != "lora"},
        "lora": settings.lora.to_json(),
        "steps": result.steps,
        "losses": result.losses,
        "seconds": round(result.seconds, 3),
        "peak_rss_mib": round(result.peak_rss_mib, 1),
        "trainable_parameters": result.trainable_parameters,
    }
    (out / ADAPTER_MANIFEST).write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
