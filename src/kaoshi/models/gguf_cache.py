"""A converted copy of each GGUF file transformers loads, so the next load takes a second, not half a minute.

transformers reads a GGUF file's metadata field by field in Python: for SmolLM2-135M that is about 9 s
for the tokenizer and 27 s for the model (the weights themselves dequantize in 2 s), every time. The
converted tokenizer, config and weights (in the dtype they were loaded in, so the numbers are identical)
are written once to `$KAOSHI_CACHE/gguf/` (default `~/.cache/kaoshi/gguf/`) and loaded from there after.
`KAOSHI_GGUF_CACHE=off` turns it off; weights above `MAX_CACHED_BYTES` are not copied.

A conversion is keyed by the file's content (its size and SHA-256), not its path: every clone or venv that
has the same file shares one folder, and a changed file gets another. The SHA-256 of a file is read once
per (path, size, modification time, inode) and kept in `digests/`, so a run does not hash the file again.
Writers build a private folder and rename it into place, so two processes converting at once never leave
a mixed folder: the second rename fails and its copy is dropped.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

MAX_CACHED_BYTES = 4 * 1024**3  # a 7B model in float32 would take 28 GB of disk: load those directly
COMPLETE = "kaoshi-complete"  # written last: a folder without it is a conversion that did not finish
DIGESTS = "digests"  # the remembered SHA-256 of each GGUF file seen, beside the conversions


def cache_root() -> Path:
    base = os.environ.get("KAOSHI_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kaoshi"
    )
    return Path(base) / "gguf"


def enabled() -> bool:
    return os.environ.get("KAOSHI_GGUF_CACHE", "on").lower() not in ("off", "0", "false", "no")


def content_digest(gguf: Path) -> str:
    """The SHA-256 of the file's bytes, remembered under `digests/` by path, size, modification time and
    inode, so it is computed once per file and not on every run."""
    before = gguf.stat()
    identity = f"{gguf.resolve()}|{before.st_size}|{before.st_mtime_ns}|{before.st_ino}"
    memo = cache_root() / DIGESTS / hashlib.sha256(identity.encode()).hexdigest()[:32]
    try:
        known = memo.read_text(encoding="utf-8").strip()
        if len(known) == 64 and all(c in "0123456789abcdef" for c in known):
            return known
    except OSError:
        pass
    hasher = hashlib.sha256()
    with gguf.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            hasher.update(chunk)
    digest = hasher.hexdigest()
    after = gguf.stat()
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        return digest  # changed while being read: do not remember it under the old identity
    try:  # written aside and renamed, so a reader never sees half a digest
        memo.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=f"{memo.name}.", dir=memo.parent)
    except OSError:  # a read-only cache: hash again next time
        return digest
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(digest)
        os.replace(partial, memo)
    except OSError:
        Path(partial).unlink(missing_ok=True)
    return digest


def converted_folder(gguf: Path, dtype: Any) -> Path:
    """Where the conversion of this file's content in this dtype lives: the same folder for the same
    bytes at any path, another for other bytes."""
    import transformers

    size = gguf.stat().st_size
    key = f"{size}|{content_digest(gguf)}|{dtype}|{transformers.__version__}"
    return cache_root() / f"gguf-{hashlib.sha256(key.encode()).hexdigest()[:24]}"


def cached(gguf: Path, dtype: Any) -> Path | None:
    """The finished conversion of this file, if there is one and the cache is on."""
    if not enabled() or gguf.stat().st_size > MAX_CACHED_BYTES:
        return None  # a file this large has no conversion (its weights are larger still): skip the hash
    folder = converted_folder(gguf, dtype)
    return folder if (folder / COMPLETE).exists() else None


def save_converted(gguf: Path, dtype: Any, tokenizer: Any, model: Any) -> Path | None:
    """Write the loaded tokenizer and model beside each other; None when the cache is off, the weights are
    too large, or the disk refuses (the run goes on with the model already loaded)."""
    from safetensors.torch import save_file

    size = sum(p.numel() * p.element_size() for p in model.parameters())
    if not enabled() or size > MAX_CACHED_BYTES:
        return None
    folder = converted_folder(gguf, dtype)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        # A fresh folder per writer (also across hosts sharing the cache), renamed into place when done.
        partial = Path(tempfile.mkdtemp(prefix=f"{folder.name}.partial-", dir=folder.parent))
    except OSError:
        return None
    try:
        config = copy.deepcopy(model.config)
        if hasattr(config, "quantization_config"):  # the weights are stored dequantized
            del config.quantization_config
        if not getattr(config, "architectures", None):  # a GGUF load names none; vLLM reads it
            config.architectures = [type(model).__name__]
        config.save_pretrained(partial)
        model.generation_config.save_pretrained(partial)
        tokenizer.save_pretrained(partial)
        save_file(_weights_once(model), str(partial / "model.safetensors"), metadata={"format": "pt"})
        (partial / COMPLETE).write_text(str(gguf.resolve()), encoding="utf-8")
        os.replace(partial, folder)
    except Exception:
        # Another process finished the same conversion first (the folder exists), the disk is full or
        # read-only, or the library refused: either way this load already has its model.
        shutil.rmtree(partial, ignore_errors=True)
        return folder if (folder / COMPLETE).exists() else None
    except BaseException:  # Ctrl-C: no half-written copy is left behind
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return folder


def _weights_once(model: Any) -> dict[str, Any]:
    """The model's tensors, each stored once: a weight tied to the input embedding (the output layer of
    SmolLM2) under the embedding's name, as checkpoints on the hub have it. transformers ties it back
    on loading; vLLM loads a tied model's embedding only and refuses a folder that lacks it
    (safetensors' own save_model keeps whichever name comes last)."""
    state = model.state_dict()
    embedding = model.get_input_embeddings()
    first = [f"{name}.weight" for name, module in model.named_modules() if module is embedding]
    first = [name for name in first if name in state]
    seen: set[tuple[int, int, tuple[int, ...]]] = set()
    kept: dict[str, Any] = {}
    for name in [*first, *(name for name in state if name not in first)]:
        tensor = state[name]
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if key not in seen:
            seen.add(key)
            kept[name] = tensor.detach().contiguous()
    return kept


def discard(folder: Path) -> None:
    """Remove a copy that failed to load, so the next load converts the file again."""
    shutil.rmtree(folder, ignore_errors=True)
