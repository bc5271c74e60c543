"""Model specs ('random', 'constant:A', 'mock:FILE', 'py:MODULE:CLASS[:ARG]') -> backends, imported lazily."""

from __future__ import annotations

import importlib

from kaoshi.models.base import Model, ModelError, ModelOptions

# name -> "module:Class"; a backend's heavy dependencies are imported only when it is chosen.
BACKENDS: dict[str, str] = {
    "random": "kaoshi.models.baselines:RandomModel",
    "constant": "kaoshi.models.baselines:ConstantModel",
    "mock": "kaoshi.models.mock:MockModel",
    "hf": "kaoshi.models.hf:HFModel",
    "gguf": "kaoshi.models.hf:HFModel",
    "smollm2": "kaoshi.models.hf:HFModel",
    "openai": "kaoshi.models.openai_api:OpenAIModel",
    "llamacpp": "kaoshi.models.llamacpp:LlamaCppModel",
    "vllm": "kaoshi.models.vllm_backend:VLLMModel",
}


def resolve_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Create the backend a model spec names. `py:pkg.module:Class[:ARG]` loads a user's own backend class
    (a subclass of kaoshi.models.Model) and passes it the spec ARG."""
    options = options or ModelOptions()
    kind, _, rest = spec.partition(":")
    if kind == "py":
        module_name, _, remainder = rest.partition(":")
        class_name, _, arg = remainder.partition(":")
        if not module_name or not class_name:
            raise ModelError("a plugin model spec is py:MODULE:CLASS[:ARG]")
        return _instantiate(f"{module_name}:{class_name}", arg, options)
    if kind not in BACKENDS:
        raise ModelError(f"unknown model {kind!r} (known: {', '.join(sorted(BACKENDS))}, py:MODULE:CLASS)")
    return _instantiate(BACKENDS[kind], spec, options)


def _instantiate(target: str, spec: str, options: ModelOptions) -> Model:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"cannot import {module_name} for model {spec!r}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise ModelError(f"{target} is not a kaoshi.models.Model subclass")
    model: Model = cls(spec, options)
    return model
