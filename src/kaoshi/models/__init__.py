"""Model backends behind one small interface; heavy backends load lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kaoshi.models.base import (
    CapabilityError,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.function import FunctionModel
from kaoshi.models.registry import BACKENDS, resolve_model

__all__ = [
    "BACKENDS",
    "CapabilityError",
    "FunctionModel",
    "GenerateRequest",
    "LoglikRequest",
    "Model",
    "ModelError",
    "ModelOptions",
    "ModelOutput",
    "from_transformers",
    "resolve_model",
]

if TYPE_CHECKING:
    from kaoshi.models.hf import from_transformers


def __getattr__(name: str) -> Any:
    # from_transformers lives with the transformers backend, imported on first use.
    if name == "from_transformers":
        from kaoshi.models.hf import from_transformers

        return from_transformers
    raise AttributeError(f"module 'kaoshi.models' has no attribute {name!r}")
