"""Model specs -> backends. A spec is NAME[:ARG] for a registered backend ('random', 'constant:A',
'hf:Qwen/Qwen2.5-0.5B', an installed package's 'mine:ARG'), or py:MODULE:CLASS[:ARG] for a user's own class.

Backends register by name -> "module:Class" of a kaoshi.models.Model subclass in the `kaoshi.models`
entry-point group: kaoshi declares its own there (pyproject.toml), and another installed package adds
its own the same way. A backend's module is imported only once it is chosen or its capabilities are read,
and imports its heavy libraries (torch, vllm, llama_cpp, aiohttp) only when a model loads."""

from __future__ import annotations

import importlib
import logging
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING

from kaoshi.models.base import Capabilities, Model, ModelError, ModelOptions
from kaoshi.models.ray_replicas import RayReplicas

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "kaoshi.models"
# kaoshi's own backends: the entry points its pyproject.toml declares (a test keeps the two equal). The
# table is what the code in this process holds, so a source checkout whose installed metadata predates
# a backend still finds it; kaoshi's own entry points are therefore read from here, not the metadata.
BACKENDS: dict[str, str] = {
    "random": "kaoshi.models.baselines:RandomModel",
    "constant": "kaoshi.models.baselines:ConstantModel",
    "mock": "kaoshi.models.mock:MockModel",
    "hf": "kaoshi.models.hf:HFModel",
    "gguf": "kaoshi.models.hf:GGUFModel",
    "smollm2": "kaoshi.models.hf:SmolLM2Model",
    "openai": "kaoshi.models.openai_api:OpenAIModel",
    "llamacpp": "kaoshi.models.llamacpp:LlamaCppModel",
    "vllm": "kaoshi.models.vllm_backend:VLLMModel",
}
# The spec prefix of a user's own class; no backend may take it as its name.
OWN_CLASS = "py"
OWN_CLASS_SPEC = "py:MODULE:CLASS[:ARG]"
_KAOSHI_DISTRIBUTION = "kaoshi"
log = logging.getLogger("kaoshi")


@cache
def plugin_backends() -> dict[str, EntryPoint]:
    """The backends other installed packages declare (entry points, read once per process); a name kaoshi
    already has is skipped with a warning."""
    # Here, not at the top: `import kaoshi.models` stays light until a backend is looked up by name.
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if _distribution(entry) == _KAOSHI_DISTRIBUTION:
            continue  # kaoshi's own: BACKENDS
        if entry.name in BACKENDS or entry.name == OWN_CLASS or entry.name in found:
            log.warning(
                "backend %r (%s) of the package %s is skipped: the name is taken",
                entry.name,
                entry.value,
                _distribution(entry) or "?",
            )
            continue
        found[entry.name] = entry
    return found


def _distribution(entry: EntryPoint) -> str | None:
    return None if entry.dist is None else entry.dist.name


def backend_names() -> tuple[str, ...]:
    """kaoshi's own backends, then installed packages' (by name)."""
    return (*BACKENDS, *sorted(plugin_backends()))


def registration(name: str) -> tuple[str, str]:
    """("module:Class", the package that declares it) of the backend called `name`; ModelError naming
    the known ones."""
    if name in BACKENDS:
        return BACKENDS[name], _KAOSHI_DISTRIBUTION
    plugin = plugin_backends().get(name)
    if plugin is None:
        known = ", ".join(sorted(backend_names()))
        raise ModelError(f"unknown model {name!r} (known: {known}, py:MODULE:CLASS)")
    return plugin.value, _distribution(plugin) or "?"


def backend_class(name: str) -> type[Model]:
    """The class of the backend registered as `name` (its module is imported, no model is loaded)."""
    return _class_at(registration(name)[0], f"backend {name!r}")


def spec_class(spec: str) -> type[Model]:
    """The backend class a model spec names: a registered backend's, or py:MODULE:CLASS's."""
    kind, _, rest = spec.partition(":")
    if kind == OWN_CLASS:
        target, _ = _own_class(rest)
        return _class_at(target, f"model {spec!r}")
    return backend_class(kind)


def spec_capabilities(spec: str) -> Capabilities | None:
    """What the backend a model spec names can do, without loading a model; None for a spec that names
    no backend (resolve_model says why)."""
    kind = spec.partition(":")[0]
    if kind != OWN_CLASS and kind not in backend_names():
        return None
    return spec_class(spec).capabilities


def default_chat_before_load(spec: str, method: str = "generate") -> bool | None:
    """The backend's default chat form for `method` without loading its model, or None where only the
    loaded model knows (a tokenizer's chat template, a class that decides when it loads)."""
    capabilities = spec_capabilities(spec)
    return None if capabilities is None else capabilities.chat_before_load(method)


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
    if kind == OWN_CLASS:
        target, arg = _own_class(rest)
        return _class_at(target, f"model {spec!r}")(arg, options)
    return backend_class(kind)(spec, options)


def _own_class(rest: str) -> tuple[str, str]:
    """("module:Class", ARG) of a py:MODULE:CLASS[:ARG] spec's remainder."""
    module_name, _, remainder = rest.partition(":")
    class_name, _, arg = remainder.partition(":")
    if not module_name or not class_name:
        raise ModelError(f"a plugin model spec is {OWN_CLASS_SPEC}")
    return f"{module_name}:{class_name}", arg


def _class_at(target: str, what: str) -> type[Model]:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a broken plugin names itself (and `kaoshi models` still lists the others)
        raise ModelError(f"cannot import {module_name} for {what}: {exc}") from exc
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Model)):
        raise ModelError(f"{target} ({what}) is not a kaoshi.models.Model subclass")
    return cls


def adapter_backends() -> tuple[str, ...]:
    """The registered backends that take LoRA adapters (local transformers weights), for messages."""
    names = []
    for name in backend_names():
        try:
            takes = backend_class(name).capabilities.adapters
        except ModelError:  # a plugin that cannot be imported takes none
            continue
        if takes:
            names.append(name)
    return tuple(names)
