"""The adapter's manifest (`kaoshi_adapter.json`): base model, training data and its content keys, settings
and the loss curve. Evaluation reads it to refuse questions the adapter was trained on."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kaoshi.data.model import Question
from kaoshi.data.split import content_key
from kaoshi.errors import InputError

ADAPTER_MANIFEST = "kaoshi_adapter.json"


class AdapterError(InputError):
    """A missing or unreadable adapter manifest, or an evaluation that would leak training questions."""


def read_manifest(adapter: Path) -> dict[str, Any]:
    path = adapter / ADAPTER_MANIFEST
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdapterError(
            f"{path} is missing: kaoshi can only check adapters made by kaoshi finetune"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise AdapterError(f"{path}: cannot read the adapter manifest: {exc}") from None
    if not isinstance(manifest.get("train", {}).get("content_keys"), list):
        raise AdapterError(f"{path}: field 'train.content_keys' is missing")
    return manifest


def overlapping(manifest: dict[str, Any], questions: Iterable[Question]) -> list[str]:
    """Ids of the evaluated questions that the adapter was trained on (same type, stem and options)."""
    trained = set(manifest["train"]["content_keys"])
    return [q.id for q in questions if content_key(q) in trained]


def check_overlap(adapter: Path, questions: Iterable[Question], allow: bool) -> tuple[dict[str, Any], int]:
    """(the manifest, how many evaluated questions it trained on); AdapterError on overlap unless allowed."""
    manifest = read_manifest(adapter)
    leaked = overlapping(manifest, questions)
    if leaked and not allow:
        shown = ", ".join(leaked[:5]) + (" ..." if len(leaked) > 5 else "")
        raise AdapterError(
            f"{len(leaked)} evaluated question(s) were in the adapter's training data ({shown}); evaluate on "
            "the test split, or pass --allow-overlap to measure memorisation on purpose"
        )
    return manifest, len(leaked)


def run_record(adapter: Path, manifest: dict[str, Any], overlap: int) -> dict[str, Any]:
    """What a run's spec keeps about its adapter."""
    train = manifest.get("train", {})
    return {
        "path": str(adapter),
        "base": manifest.get("base"),
        "train_file": train.get("file"),
        "train_fingerprint": train.get("fingerprint"),
        "train_questions": train.get("questions"),
        "split": manifest.get("split"),
        "lora": manifest.get("lora"),
        "steps": manifest.get("steps"),
        "overlap": overlap,
    }
