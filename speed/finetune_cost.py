"""Time and memory of a short LoRA fine-tune of the small model on this machine, and what computing the
LM head only at answer positions saves against the usual full-logits loss (what the transformers Trainer
computes from `labels`), same examples, same steps, each setup in its own process (peak RSS is per process).

Run: .venv/bin/python speed/finetune_cost.py   (needs the small model and peft; `make test` has both)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

STEPS = int(os.environ.get("KAOSHI_BENCH_STEPS", "6"))
SETUPS = {
    "kaoshi (head at answer positions)": {},
    "full-logits loss (Trainer-style labels)": {"full_logits": True},
    "kaoshi + gradient checkpointing": {"gradient_checkpointing": True},
}

WORKER = """
import json, sys
from pathlib import Path
from kaoshi.finetune.train import TrainSettings, finetune
from kaoshi.models.base import ModelOptions
train, out, extra = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
settings = TrainSettings(max_steps=int(sys.argv[4]), batch_size=4, learning_rate=1e-3, **extra)
result = finetune("smollm2", train, out, settings, ModelOptions())
print(json.dumps({"seconds": result.seconds, "rss": result.peak_rss_mib, "losses": result.losses}))
"""


def main() -> None:
    from kaoshi.cli.main import main as kaoshi

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kaoshi(["split", "--benchmark", "sample", "--train", "0.7", "--seed", "0", "--stratify", "type",
                "-o", str(folder / "split")])  # fmt: skip
        train = folder / "split" / "train.jsonl"
        print(f"SmolLM2-135M, LoRA r=8 alpha=32, qualbench 1-shot prompts, batch 4, {STEPS} steps, CPU")
        for label, extra in SETUPS.items():
            out = folder / label.split()[0]
            done = subprocess.run(
                [sys.executable, "-c", WORKER, str(train), str(out), json.dumps(extra), str(STEPS)],
                capture_output=True,
                text=True,
                check=True,
            )
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            losses = figures["losses"]
            print(
                f"{label:<42} {figures['seconds']:6.1f} s total  peak {figures['rss']:6.0f} MiB  "
                f"loss {losses[0]:.3f} -> {losses[-1]:.3f}"
            )


if __name__ == "__main__":
    main()
