"""llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) on loopback, for the tests
and speed scripts that score through a real server."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

START_S = 180.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def llama_server(model: Path, log: Path, *options: str) -> Iterator[str]:
    """The server on `model` with a free loopback port and llama-cpp-python's `options` (`--n_ctx 1024`);
    its base URL once it answers. Its output goes to `log` (a file: a full pipe would stall it)."""
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    command += ["--host", "127.0.0.1", "--port", str(port), *options]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"llama_cpp.server did not start: {output}") from None
                time.sleep(0.5)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
