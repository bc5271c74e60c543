"""Model backends behind one small interface; heavy backends load lazily."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kaoshi.lazy import lazy_exports

# Names are imported on first use: a run's settings (kaoshi.RunConfig, read by `kaoshi report` for one
# option) need only ModelOptions from kaoshi.models.base, not the backend registry (about 6 ms);
# from_transformers lives with the transformers backend.
_EXPORTS = {
    **dict.fromkeys(
        (
            "CapabilityError",
            "GenerateRequest",
            "LoglikRequest",
            "Model",
            "ModelError",
            "ModelOptions",
            "ModelOutput",
        ),
        "kaoshi.models.base",
    ),
    "FunctionModel": "kaoshi.models.function",
    **dict.fromkeys(("BACKENDS", "resolve_model"), "kaoshi.models.registry"),
    "from_transformers": "kaoshi.models.hf",
}

if TYPE_CHECKING:
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


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
