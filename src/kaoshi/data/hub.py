"""Datasets from the Hugging Face hub through `datasets` (the `hf` extra). Offline -> one clear line."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from kaoshi.data.errors import DataError


def _load_dataset() -> Callable[..., Any]:
    try:
        module = importlib.import_module("datasets")
    except ImportError:
        raise DataError(
            "loading from the Hugging Face hub needs the 'datasets' package: pip install 'kaoshi[hub]' "
            "(or pass --data PATH to a downloaded copy)"
        ) from None
    load: Callable[..., Any] = module.load_dataset
    return load


def fetch(hub_id: str, **kwargs: Any) -> Any:
    """`datasets.load_dataset(hub_id, **kwargs)`; DataError with one line when it cannot."""
    load = _load_dataset()
    try:
        return load(hub_id, **kwargs)
    except Exception as exc:  # datasets raises many types for network and cache failures
        raise DataError(
            f"could not load {hub_id!r} from the Hugging Face hub ({type(exc).__name__}: {exc}); "
            "offline? download the data and pass --data PATH"
        ) from exc


def loading_script_only(hub_id: str, source: str) -> DataError:
    """The one line for a hub dataset that is a loading script and nothing else (CMMLU's, M3KE's): datasets>=4
    runs no scripts, and kaoshi runs no remote code, so the data must come from `source`."""
    return DataError(
        f"{hub_id} on the Hugging Face hub is a loading script, which datasets>=4 does not run (nor does "
        f"kaoshi run remote code): download the data ({source}) and pass --data PATH"
    )
