"""The GGUF conversion cache: where it lives, when it is used, and that a failed write leaves nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from kaoshi.models import gguf_cache

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


class _Tokenizer:
    def save_pretrained(self, folder: Path) -> None:
        (Path(folder) / "tokenizer.json").write_text("{}", encoding="utf-8")


def _conversions() -> list[Path]:
    """The cache's entries other than its remembered file digests."""
    return [p for p in gguf_cache.cache_root().iterdir() if p.name != gguf_cache.DIGESTS]


def _tiny_model(tied: bool = False) -> Any:
    config = transformers.LlamaConfig(
        vocab_size=32,
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        tie_word_embeddings=tied,
    )
    config.architectures = None  # as a model loaded from a GGUF file has it
    return transformers.LlamaForCausalLM(config)


@pytest.fixture
def gguf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KAOSHI_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("KAOSHI_GGUF_CACHE", raising=False)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_a_conversion_is_found_once_complete_and_keyed_by_the_content(gguf: Path) -> None:
    assert gguf_cache.cached(gguf, torch.float32) is None
    folder = gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), _tiny_model())
    assert folder is not None and gguf_cache.cached(gguf, torch.float32) == folder
    assert {p.name for p in folder.iterdir()} >= {"config.json", "model.safetensors", "tokenizer.json"}
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert "quantization_config" not in config
    assert config["architectures"] == ["LlamaForCausalLM"]  # what vLLM loads the folder as
    assert gguf_cache.cached(gguf, torch.bfloat16) is None  # another dtype, other numbers
    os.utime(gguf, ns=(1, 1))  # touched, same bytes: the same conversion
    assert gguf_cache.cached(gguf, torch.float32) == folder
    gguf.write_bytes(b"GGUF2")  # the file changed: its old conversion is not used
    assert gguf_cache.cached(gguf, torch.float32) is None


def test_a_converted_model_loads_with_the_same_weights(gguf: Path) -> None:
    model = _tiny_model()
    folder = gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), model)
    assert folder is not None
    loaded = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    ids = torch.tensor([[1, 5, 7]])
    with torch.inference_mode():
        assert torch.equal(loaded(ids).logits, model(ids).logits)


def test_off_means_neither_read_nor_written(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), _tiny_model())
    monkeypatch.setenv("KAOSHI_GGUF_CACHE", "off")
    assert gguf_cache.cached(gguf, torch.float32) is None
    assert gguf_cache.save_converted(gguf, torch.float16, _Tokenizer(), _tiny_model()) is None
    assert len(_conversions()) == 1


def test_a_refused_write_leaves_no_folder(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("safetensors.torch.save_file", full_disk)
    assert gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), _tiny_model()) is None
    assert gguf_cache.cached(gguf, torch.float32) is None
    assert not _conversions()


def test_weights_too_large_to_copy_are_loaded_directly(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gguf_cache, "MAX_CACHED_BYTES", 10)
    assert gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), _tiny_model()) is None


def test_ctrl_c_while_writing_leaves_no_folder(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("safetensors.torch.save_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), _tiny_model())
    assert not _conversions()


def test_a_library_error_while_writing_is_not_fatal(gguf: Path) -> None:
    class Refusing(_Tokenizer):
        def save_pretrained(self, folder: Path) -> None:
            raise ValueError("cannot serialize")

    assert gguf_cache.save_converted(gguf, torch.float32, Refusing(), _tiny_model()) is None
    assert not _conversions()


def test_a_tied_output_layer_is_stored_once_under_the_embeddings_name(gguf: Path) -> None:
    """As SmolLM2's: vLLM loads a tied model's embedding and refuses a folder without it."""
    from safetensors import safe_open

    model = _tiny_model(tied=True)
    assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    folder = gguf_cache.save_converted(gguf, torch.float32, _Tokenizer(), model)
    assert folder is not None
    with safe_open(str(folder / "model.safetensors"), "pt") as stored:
        names = set(stored.keys())
    assert "model.embed_tokens.weight" in names and "lm_head.weight" not in names
    assert names == {name for name in model.state_dict() if name != "lm_head.weight"}
    loaded = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    ids = torch.tensor([[1, 5, 7]])
    with torch.inference_mode():
        assert torch.equal(loaded(ids).logits, model(ids).logits)
