"""Packages whose names are imported on first use (PEP 562): a package lists which module holds each name
it offers, and `kaoshi.scoring.Status` imports kaoshi.scoring.extract when first read, not when
kaoshi.scoring is. Importing every name at once cost each command's start a third of it."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`, whose `exports` map each name to the module
    that holds it; a name read is kept in the package's `namespace` (its globals()), so it is looked up
    once."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *exports])

    return __getattr__, __dir__
