"""LoRA settings: the paper's defaults, and which modules to adapt for each architecture."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Attention projections per `config.model_type`; other architectures fall back to peft's own table.
TARGET_MODULES: dict[str, tuple[str, ...]] = {
    "llama": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "mistral": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "qwen2": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "qwen3": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "gemma": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "gemma2": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "phi3": ("qkv_proj", "o_proj"),
    "gpt2": ("c_attn",),
    "qwen": ("c_attn",),
    "gpt_neox": ("query_key_value",),
    "bloom": ("query_key_value",),
    "falcon": ("query_key_value",),
    "chatglm": ("query_key_value",),
    "baichuan": ("W_pack",),
    "internlm2": ("wqkv", "wo"),
}


@dataclass(frozen=True)
class LoraSettings:
    r: int = 8
    alpha: int = 32
    dropout: float = 0.1
    target_modules: tuple[str, ...] = ()  # empty: chosen from the architecture

    def modules_for(self, model_type: str) -> list[str] | None:
        """The modules to adapt: the override, our table, or None (peft decides from the model type)."""
        if self.target_modules:
            return list(self.target_modules)
        known = TARGET_MODULES.get(model_type)
        return list(known) if known else None

    def to_json(self) -> dict[str, Any]:
        return {
            "r": self.r,
            "alpha": self.alpha,
            "dropout": self.dropout,
            "target_modules": list(self.target_modules),
        }


def lora_config(settings: LoraSettings, model_type: str) -> Any:
    from peft import LoraConfig

    return LoraConfig(
        r=settings.r,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=settings.modules_for(model_type),
        bias="none",
        task_type="CAUSAL_LM",
    )


def parse_modules(text: str | None) -> tuple[str, ...]:
    return tuple(m.strip() for m in (text or "").split(",") if m.strip())


def describe(modules: Sequence[str] | None) -> str:
    return ", ".join(modules) if modules else "peft's default for the architecture"
