"""Which other processes have a store open: what to name when it stays locked."""

from __future__ import annotations

import os
from pathlib import Path

_SHOWN = 4
_COMMAND_CHARS = 60


def processes_using(path: Path) -> list[str]:
    """'pid 4242 (sqlite3 runs.sqlite)' for each other process with the store or its -wal open. Linux only
    (it reads /proc); elsewhere, or when nothing is found, an empty list."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    store = os.path.realpath(path)
    targets = {store, f"{store}-wal"}
    found: list[str] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if _has_open(entry, targets):
            found.append(f"pid {entry.name} ({_command(entry)})")
    return found


def describe_holders(path: Path) -> str:
    """The processes that may hold the store's lock, for a message."""
    found = processes_using(path)
    if not found:
        return "no other process on this machine has it open; another machine may, over a network file system"
    more = f" and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    return "open in " + ", ".join(found[:_SHOWN]) + more


def _has_open(process: Path, targets: set[str]) -> bool:
    try:
        for fd in (process / "fd").iterdir():
            if os.readlink(fd) in targets:
                return True
    except OSError:  # gone meanwhile, or another user's process
        return False
    return False


def _command(process: Path) -> str:
    try:
        words = (process / "cmdline").read_bytes().split(b"\0")
        text = " ".join(" ".join(word.decode(errors="replace").split()) for word in words if word)
    except OSError:
        text = ""
    if not text:
        try:
            text = (process / "comm").read_text().strip()
        except OSError:
            text = "?"
    return text if len(text) <= _COMMAND_CHARS else text[: _COMMAND_CHARS - 3] + "..."
