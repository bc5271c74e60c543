"""Model specs ('random', 'constant:A', 'mock:FILE', 'py:MODULE:CLASS[:ARG]') -> backends, imported lazily."""

from __future__ import annotations

import importlib
from dataclasses import replace

from kaoshi.models.base import Model, ModelError, ModelOptions, chat_default
from kaoshi.models.ray_replicas import RayReplicas

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
# Backends whose default chat form is a class attribute and whose module imports nothing heavy; the
# others (hf, gguf, llamacpp, vllm) read it from the loaded tokenizer's chat template.
_CHAT_FROM_CLASS = frozenset({"random", "constant", "mock", "openai"})


def default_chat_before_load(spec: str, method: str = "generate") -> bool | None:
    """The backend's default chat form for `method` without loading its model, or None where only the
    loaded model knows (a tokenizer's chat template, or a plugin class that may decide in __init__)."""
    kind = spec.partition(":")[0]
    if kind not in _CHAT_FROM_CLASS:
        return None
    return chat_default(_backend_class(BACKENDS[kind], spec), method)


def resolve_model(spec: str, options: ModelOptions | None = None) -> Model:
    """Create the backend a model spec names. `py:pkg.module:Class[:ARG]` loads a user's own backend class
    (a subclass of kaoshi.models.Model) and passes it the spec ARG."""
    options = options or ModelOptions()
    if options.on_ray:
        # Each replica loads the backend itself, as one process would (no Ray inside a replica).
        local = replace(options, ray=False, replicas=1, ray_address=None)
        return RayReplicas(
            spec,
            local,
            options.replicas,
            load_backend=resolve_model,
            gpus_per_replica=options.gpus_per_replica,
            address=options.ray_address,
        )
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
    model: Model = _backend_class(target, spec)(spec, options)
    return model


def _backend_class(target: str, spec: str) -> type[Model]:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModelError(f"cannot import {module_name} for model {spec!r}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise ModelError(f"{target} is not a kaoshi.models.Model subclass")
    return cls
