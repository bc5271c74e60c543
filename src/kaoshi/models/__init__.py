"""Model backends behind one small interface; heavy backends load lazily."""

from kaoshi.models.base import (
    CapabilityError,
    GenerateRequest,
    LoglikRequest,
    Model,
    ModelError,
    ModelOptions,
    ModelOutput,
)
from kaoshi.models.registry import BACKENDS, resolve_model

__all__ = [
    "BACKENDS",
    "CapabilityError",
    "GenerateRequest",
    "LoglikRequest",
    "Model",
    "ModelError",
    "ModelOptions",
    "ModelOutput",
    "resolve_model",
]
