"""Where an hf spec points, and one clear line when it points nowhere (no weights loaded here)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kaoshi.models.base import ModelError
from kaoshi.models.hf import check_hub_model, locate


@pytest.mark.parametrize("target", ["./missing-folder", "../nope", "/no/such/model", "a/b/c"])
def test_a_missing_local_folder_is_named_as_one(target: str) -> None:
    with pytest.raises(ModelError, match=f"local folder {target} not found"):
        locate(f"hf:{target}")


def test_hub_ids_and_existing_folders(tmp_path: Path) -> None:
    assert locate("hf:Qwen/Qwen2.5-7B-Instruct") == ("Qwen/Qwen2.5-7B-Instruct", None)
    assert locate(f"hf:{tmp_path}") == (str(tmp_path), None)
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    with pytest.raises(ModelError, match="is a file; hf: needs a model folder"):
        locate(f"hf:{weights}")


def test_an_unreachable_hub_fails_fast_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    hub = pytest.importorskip("huggingface_hub")
    asked: list[float | None] = []

    def not_cached(repo_id: str, **kwargs: object) -> str:
        raise OSError("not in the cache")

    def offline(repo_id: str, *, timeout: float | None = None) -> object:
        asked.append(timeout)
        raise ConnectionError("no network")

    monkeypatch.setattr(hub, "snapshot_download", not_cached)
    monkeypatch.setattr(hub, "model_info", offline)
    started = time.perf_counter()
    with pytest.raises(ModelError) as caught:
        check_hub_model("org/model")
    assert time.perf_counter() - started < 1.0 and asked == [5.0]
    message = str(caught.value)
    assert "\n" not in message and "'org/model'" in message and "ConnectionError" in message
    assert "hf:PATH" in message


def test_a_cached_hub_model_is_not_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    hub = pytest.importorskip("huggingface_hub")
    monkeypatch.setattr(hub, "snapshot_download", lambda repo_id, **kwargs: "/cache/org/model")

    def never(repo_id: str, **kwargs: object) -> object:
        raise AssertionError("the hub was asked although the model is cached")

    monkeypatch.setattr(hub, "model_info", never)
    check_hub_model("org/model")
