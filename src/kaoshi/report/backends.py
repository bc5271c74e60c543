"""The model backends as `kaoshi models` shows them: what each is, can do and needs (kaoshi.list_backends)."""

from __future__ import annotations

from collections.abc import Sequence

from kaoshi.models.base import METHOD_ENTRIES, SAMPLING_OPTIONS, Capabilities, ChatForm
from kaoshi.models.catalog import BackendInfo
from kaoshi.report.tables import TextTable

NOTE = (
    "kaoshi run --model NAME[:ARG], or py:MODULE:CLASS[:ARG] for your own kaoshi.models.Model; another "
    'package adds backends in its [project.entry-points."kaoshi.models"]'
)
_CHAT_FORMS = {ChatForm.PLAIN: "plain", ChatForm.CHAT: "chat", ChatForm.LOADED: "the model's template"}


def backends_table(listed: Sequence[BackendInfo]) -> TextTable:
    """One row per backend: its name and --model form, what it is, its methods, default chat form,
    sampling options, adapters, batch endpoint, where it comes from and whether it is installed here."""
    return TextTable(
        "model backends",
        (
            "name",
            "--model",
            "what it is",
            "methods",
            "chat by default",
            "sampling",
            "adapters",
            "batch API",
            "from",
            "installed here",
        ),
        [_row(backend) for backend in listed],
        note=NOTE,
        # what a newcomer picks a backend by stays longest in a narrow terminal; prose wraps
        priority=(10, 9, 5, 8, 6, 2, 3, 1, 4, 7),
        wrap=frozenset({2, 4, 5, 9}),
    )


def _row(backend: BackendInfo) -> list[str]:
    capabilities = backend.capabilities
    if capabilities is None:
        return [backend.name, backend.spec, "—", "—", "—", "—", "—", "—", backend.source, _installed(backend)]
    return [
        backend.name,
        backend.spec,
        capabilities.description or "—",
        ", ".join(method for method in METHOD_ENTRIES if method in capabilities.methods) or "—",
        _chat(capabilities),
        ", ".join(option for option in SAMPLING_OPTIONS if option in capabilities.sampling) or "—",
        "yes" if capabilities.adapters else "—",
        "yes" if capabilities.batch_endpoint else "—",
        backend.source,
        _installed(backend),
    ]


def _chat(capabilities: Capabilities) -> str:
    generate, loglik = capabilities.chat_form("generate"), capabilities.chat_form("loglik")
    shown = _CHAT_FORMS[generate]
    return shown if loglik is generate else f"{shown}; loglik: {_CHAT_FORMS[loglik]}"


def _installed(backend: BackendInfo) -> str:
    if backend.error is not None:
        return f"no: {backend.error}"
    if backend.missing:
        install = backend.capabilities.install if backend.capabilities is not None else ""
        return (
            f"no ({', '.join(backend.missing)}): {install}"
            if install
            else f"no ({', '.join(backend.missing)})"
        )
    return "yes"
