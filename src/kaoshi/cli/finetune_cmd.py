"""kaoshi finetune: LoRA on an exam's training split (peft), saved as an adapter for kaoshi run --adapter."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from kaoshi.api.training import StepLog, describe_modules, finetune, parse_modules
from kaoshi.cli.common import eprint


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("finetune", help="LoRA fine-tuning on a training split (kaoshi split)")
    parser.add_argument("--model", required=True, help="hf:ID_OR_FOLDER, gguf:FILE or smollm2")
    parser.add_argument("--train", type=Path, required=True, help="the training exam (DIR/train.jsonl)")
    parser.add_argument("--out", type=Path, required=True, help="the adapter folder to write")
    parser.add_argument("--prompt", default="qualbench", help="the prompt template, as in kaoshi run")
    parser.add_argument("--shots", type=int, help="exemplars in each training prompt (default: the prompt's)")
    chat = parser.add_mutually_exclusive_group()
    chat.add_argument("--chat", dest="chat", action="store_true", default=None)
    chat.add_argument("--no-chat", dest="chat", action="store_false")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--max-steps", type=int, help="stop after this many optimizer steps")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-4, help="AdamW learning rate")
    parser.add_argument("--max-length", type=int, default=1024, help="tokens per example (context cut left)")
    parser.add_argument(
        "--with-explanation", action="store_true", help="train on answer + 解析, not the answer only"
    )
    parser.add_argument("--lora-r", type=int, default=8)
    parser.add_argument("--lora-alpha", type=int, default=32)
    parser.add_argument("--lora-dropout", type=float, default=0.1)
    parser.add_argument("--target-modules", help="comma-separated module names (default: per architecture)")
    parser.add_argument("--save-every", type=int, help="checkpoint every N steps (default: every epoch)")
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --out")
    parser.add_argument(
        "--gradient-checkpointing",
        action="store_true",
        help="recompute activations: less memory, ~30%% slower",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.set_defaults(handler=finetune_command)


def finetune_command(args: argparse.Namespace) -> int:
    modules = parse_modules(args.target_modules)
    result = finetune(
        args.model,
        args.train,
        args.out,
        prompt=args.prompt,
        shots=args.shots,
        chat=args.chat,
        epochs=args.epochs,
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        max_length=args.max_length,
        with_explanation=args.with_explanation,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout,
        target_modules=modules,
        save_every=args.save_every,
        gradient_checkpointing=args.gradient_checkpointing,
        seed=args.seed,
        device=args.device,
        dtype=args.dtype,
        resume=args.resume,
        on_step=_progress(sys.stderr.isatty()),
    )
    first, last = result.losses[0], result.losses[-1]
    eprint(
        f"wrote adapter {result.out}: {result.steps} step(s) on {result.examples} question(s)"
        + (f" (resumed at step {result.resumed_from})" if result.resumed_from else "")
        + f"; loss {first:.4f} → {last:.4f}; {result.trainable_parameters:,} trainable parameters "
        f"(LoRA r={args.lora_r}, alpha={args.lora_alpha}, dropout={args.lora_dropout}, modules: "
        f"{describe_modules(modules) if modules else 'per architecture'}); "
        f"{result.seconds:.1f} s, peak memory {result.peak_rss_mib:.0f} MiB"
    )
    return 0


def _progress(terminal: bool) -> Callable[[StepLog], None]:
    def show(log: StepLog) -> None:
        width = 30
        done = int(width * log.step / log.total)
        bar = "#" * done + "." * (width - done)
        line = f"step {log.step}/{log.total} [{bar}] loss {log.loss:.4f} {log.seconds:.1f} s/step"
        if terminal:
            print(f"\r{line}", end="\n" if log.step == log.total else "", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    return show
