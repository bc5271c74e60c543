"""The GGUF conversion cache is keyed by the file's content: every clone with the same file shares one
conversion, made once (issue 30)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from kaoshi.models import ModelOptions, gguf_cache, hf_load

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CONTENT = b"GGUF" + bytes(range(256)) * 64


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KAOSHI_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KAOSHI_GGUF_CACHE", raising=False)
    return tmp_path / "cache"


def _copy(folder: Path, content: bytes = CONTENT, name: str = "model.gguf") -> Path:
    """A GGUF file as a clone (or a venv) has it, at its own path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(content)
    return path


def _conversions() -> list[Path]:
    return [p for p in gguf_cache.cache_root().iterdir() if p.name != gguf_cache.DIGESTS]


class _Tokenizer:
    pad_token_id = 0

    def save_pretrained(self, folder: Path) -> None:
        (Path(folder) / "tokenizer.json").write_text("{}", encoding="utf-8")


def _tiny_model() -> Any:
    config = transformers.LlamaConfig(
        vocab_size=32, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2
    )
    return transformers.LlamaForCausalLM(config)


def test_the_same_bytes_at_different_paths_share_a_folder(tmp_path: Path) -> None:
    first = _copy(tmp_path / "clone-a" / ".venv")
    second = _copy(tmp_path / "clone-b" / ".venv", name="renamed.gguf")
    assert gguf_cache.converted_folder(first, torch.float32) == gguf_cache.converted_folder(
        second, torch.float32
    )


def test_other_bytes_get_another_folder(tmp_path: Path) -> None:
    original = _copy(tmp_path / "a")
    middle = len(CONTENT) // 2  # same size, same head and tail: only the middle differs
    edited = _copy(tmp_path / "b", CONTENT[:middle] + b"\xff" + CONTENT[middle + 1 :])
    folders = {gguf_cache.converted_folder(p, torch.float32) for p in (original, edited)}
    assert len(folders) == 2


def test_two_clones_convert_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conversions: list[str] = []
    from_cache: list[str] = []

    def tokenizer(source: str, **kwargs: object) -> _Tokenizer:
        return _Tokenizer()

    def model(source: str, **kwargs: object) -> Any:
        (conversions if "gguf_file" in kwargs else from_cache).append(str(source))
        return _tiny_model()

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", tokenizer)
    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", model)
    options = ModelOptions(device="cpu", dtype="float32")
    for clone in ("clone-a", "clone-b"):
        path = _copy(tmp_path / clone / ".venv")
        hf_load.load_causal_lm(f"gguf:{path}", options)
    assert len(conversions) == 1 and len(from_cache) == 1
    [folder] = _conversions()
    assert from_cache == [str(folder)]


def test_a_second_writer_of_the_same_conversion_keeps_the_first(tmp_path: Path) -> None:
    # Two processes both missed the cache and converted: the second rename fails, its copy is dropped.
    first, second = _copy(tmp_path / "a"), _copy(tmp_path / "b")
    assert (
        gguf_cache.cached(first, torch.float32) is None and gguf_cache.cached(second, torch.float32) is None
    )
    written = gguf_cache.save_converted(first, torch.float32, _Tokenizer(), _tiny_model())
    assert written is not None
    assert gguf_cache.save_converted(second, torch.float32, _Tokenizer(), _tiny_model()) == written
    assert _conversions() == [written]
    assert gguf_cache.cached(second, torch.float32) == written


def test_the_digest_is_read_once_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _copy(tmp_path / "a")
    reads: list[int] = []
    sha256 = hashlib.sha256

    def counting(*args: Any, **kwargs: Any) -> Any:
        if not args:  # the file's own hash; the memo's name is a hash of its identity
            reads.append(1)
        return sha256(*args, **kwargs)

    monkeypatch.setattr(hashlib, "sha256", counting)
    digest = gguf_cache.content_digest(path)
    assert digest == sha256(CONTENT).hexdigest()
    assert gguf_cache.content_digest(path) == digest and len(reads) == 1
    path.write_bytes(CONTENT + b"!")  # changed: hashed again
    assert gguf_cache.content_digest(path) == sha256(CONTENT + b"!").hexdigest() and len(reads) == 2
