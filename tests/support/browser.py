"""The headless Chromium the browser tests drive through Playwright: the system's, never a download."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Chromium is needed for the browser test: `make test` installs Debian's chromium as root"
    return path


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (pytest skips the test when playwright is not installed)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the dev extra installs playwright")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()
