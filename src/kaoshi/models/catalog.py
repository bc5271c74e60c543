"""`kaoshi.list_backends`: every model backend kaoshi can run (its own and other installed packages'), what
each can do, and whether what it needs is installed here, as `kaoshi models` lists them.

Listing imports each backend's module to read its class's capabilities, never the libraries it loads a
model with: whether those are installed is asked of importlib.util.find_spec, which imports nothing."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from kaoshi.models.base import METHOD_ENTRIES, SAMPLING_OPTIONS, Capabilities, ModelError
from kaoshi.models.registry import OWN_CLASS_SPEC, backend_class, backend_names, registration


@dataclass(frozen=True)
class BackendInfo:
    """A registered backend: its name, where it comes from, and what its class declares it can do."""

    name: str
    source: str  # the package that declares it ("kaoshi" for kaoshi's own)
    target: str  # "module:Class"
    # What its class declares; None when the class could not be imported (`error` says why).
    capabilities: Capabilities | None
    missing: tuple[str, ...] = ()  # the modules it needs that are not installed here
    error: str | None = None

    @property
    def spec(self) -> str:
        """How --model names it: NAME, or NAME:ARG with ARG as the class describes it."""
        argument = self.capabilities.argument if self.capabilities is not None else ""
        return f"{self.name}:{argument}" if argument else self.name

    @property
    def installed(self) -> bool:
        """Whether it can load here: its class imports and every module it needs is installed."""
        return self.error is None and not self.missing

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "spec": self.spec,
            "source": self.source,
            "class": self.target,
            **_declared(self.capabilities),
            "installed": self.installed,
            "missing": list(self.missing),
            "error": self.error,
        }


def _declared(capabilities: Capabilities | None) -> dict[str, object]:
    """A class's capabilities as JSON fields (each None for a class that could not be imported)."""
    fields = ("description", "methods", "chat", "sampling", "extra_body", "adapters", "batch_endpoint")
    if capabilities is None:
        return {**dict.fromkeys(fields), "needs": [], "install": ""}
    return {
        "description": capabilities.description,
        "methods": [method for method in METHOD_ENTRIES if method in capabilities.methods],
        "chat": {method: capabilities.chat_form(method).value for method in METHOD_ENTRIES},
        "sampling": [option for option in SAMPLING_OPTIONS if option in capabilities.sampling],
        "extra_body": capabilities.extra_body,
        "adapters": capabilities.adapters,
        "batch_endpoint": capabilities.batch_endpoint,
        "needs": list(capabilities.needs),
        "install": capabilities.install,
    }


def list_backends() -> list[BackendInfo]:
    """Every registered backend (kaoshi's own, then installed packages'), with what it can do and whether
    it can load here. A py:MODULE:CLASS[:ARG] spec runs a class that is not registered."""
    return [backend_info(name) for name in backend_names()]


def backend_info(name: str) -> BackendInfo:
    """The registered backend called `name`; ModelError naming the known ones."""
    target, source = registration(name)
    try:
        capabilities = backend_class(name).capabilities
    except ModelError as exc:
        return BackendInfo(name, source, target, None, error=str(exc))
    missing = tuple(module for module in capabilities.needs if not _installed(module))
    return BackendInfo(name, source, target, capabilities, missing)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing, or a broken __spec__
        return False


def model_spec_help() -> str:
    """The help of a --model option: the registered backends by name (their modules are not imported:
    every run builds this help, and a package's backend module is not kaoshi's to keep light)."""
    return (
        f"the backend, NAME[:ARG] with NAME one of {', '.join(backend_names())} (kaoshi models: what each "
        f"takes and can do), or {OWN_CLASS_SPEC} for your own kaoshi.models.Model"
    )
