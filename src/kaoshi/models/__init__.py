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
from kaoshi.models.function import FunctionModel
from kaoshi.models.hf import from_transformers
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
