"""ModelError and CapabilityError: what a backend raises when it cannot be created or used.

Apart from the model interface (kaoshi.models.base, which re-exports them) so that the command line can
tell these errors from bugs without importing the interface's option and request types (about 6 ms of
every command's start)."""

from __future__ import annotations


class ModelError(Exception):
    """A backend could not be created or used (bad spec, missing dependency, missing file)."""


class CapabilityError(ModelError):
    """The backend cannot do what the run asks (e.g. log-likelihood from a text-only API)."""
