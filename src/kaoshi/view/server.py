"""Serving the viewer: on this machine only unless asked otherwise, on a port chosen up front (0: any free
one), in the foreground (`kaoshi view`) or in a thread (a notebook, a test).

The store is opened read-only and must exist: the viewer never creates, changes or locks it, so it can
watch runs other processes are writing.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kaoshi.analysis.cost import PriceList
from kaoshi.errors import InputError
from kaoshi.store import Store, default_store_path, require_store_file

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
EXTRA = "pip install 'kaoshi[view]'"
_START_WAIT_S = 10.0


def say(line: str) -> None:
    """Print a line at once, also to a pipe (whoever started the viewer waits for its URL)."""
    print(line, flush=True)


def require_extra() -> None:
    """InputError naming the extra when starlette or uvicorn is missing."""
    missing = [name for name in ("starlette", "uvicorn") if importlib.util.find_spec(name) is None]
    if missing:
        raise InputError(f"kaoshi view needs {' and '.join(missing)}: {EXTRA}")


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> str | None:
    """None for a loopback host; for another, a warning to print when `allow_remote`, else InputError."""
    if is_loopback(host):
        return None
    exposure = "anyone who can reach it could read every run, prompt and answer in the store (no login)"
    if not allow_remote:
        raise InputError(
            f"kaoshi view serves on this machine only (127.0.0.1 by default): on {host} {exposure}; "
            "pass --allow-remote (allow_remote=True) to serve there anyway"
        )
    return f"warning: serving on {host}: {exposure}"


def _allowed_hosts(host: str) -> tuple[str, ...] | None:
    """The Host names a loopback viewer answers: this machine's names; None (any) when remote."""
    if not is_loopback(host):
        return None
    bracketed = f"[{host.strip('[]')}]" if ":" in host else host
    return ("localhost", "127.0.0.1", "[::1]", bracketed.lower())


def create_app(
    store: str | Path | None = None, *, host: str = DEFAULT_HOST, prices: PriceList | None = None
) -> Any:
    """The viewer's ASGI app for the store (default: $KAOSHI_STORE or ./kaoshi_runs/kaoshi.sqlite), to
    serve with any ASGI server; `host`: the address it will be served on (loopback: it answers only
    requests addressed to this machine); `prices`: what each run's tokens cost, on its page
    (kaoshi.api.costs.parse_prices)."""
    path = _checked_store(store)
    # Late import: starlette is an optional extra (kaoshi[view]), imported only to serve.
    from kaoshi.view.app import create_viewer_app

    return create_viewer_app(path, _allowed_hosts(host), prices)


def _checked_store(store: str | Path | None) -> Path:
    """The store's path, once it is known to be a kaoshi store this process can read (StoreError naming
    the stores beside it when there is none; nothing is created). InputError without the view extra."""
    require_extra()
    path = require_store_file(Path(store) if store is not None else default_store_path())
    with Store(path, read_only=True):
        pass
    return path


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port, bound before the server starts (so port 0's choice is known)."""
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
        family, kind, proto, _, address = found[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        raise InputError(
            f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port (0: any free one)"
        ) from None
    return sock


def _url(host: str, sock: socket.socket) -> str:
    port = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host.strip("[]") else host
    return f"http://{shown}:{port}/"


@dataclass
class RunningView:
    """A viewer serving in a thread of this process: open `url`; `stop()` (or leaving the `with` block)
    ends it."""

    url: str
    _server: Any
    _thread: threading.Thread
    _socket: socket.socket

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=_START_WAIT_S)
        self._socket.close()

    def __enter__(self) -> RunningView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _server(
    store: str | Path | None,
    host: str,
    port: int,
    allow_remote: bool,
    announce: Callable[[str], None],
    prices: PriceList | None = None,
) -> tuple[Any, socket.socket]:
    """The server of the store's viewer and its listening socket; the URL (and any warning) announced."""
    warning = check_host(host, allow_remote)
    path = _checked_store(store)
    # uvicorn and starlette are the optional view extra, imported only to serve (_checked_store ran
    # require_extra)
    import uvicorn

    # Late import: starlette is an optional extra (kaoshi[view]).
    from kaoshi.view.app import create_viewer_app

    app = create_viewer_app(path, _allowed_hosts(host), prices)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    sock = _listen(host, port)
    if warning:
        announce(warning)
    announce(f"kaoshi view: {_url(host, sock)}  (store {path}, read-only; Ctrl-C stops)")
    return uvicorn.Server(config), sock


def start(
    store: str | Path | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = 0,
    allow_remote: bool = False,
    announce: Callable[[str], None] = say,
    prices: PriceList | None = None,
) -> RunningView:
    """Serve the viewer of the store in a background thread and return once it answers (port 0: any free
    port; the returned `url` says which). `prices`: what each run's tokens cost, on its page."""
    server, sock = _server(store, host, port, allow_remote, announce, prices)
    url = _url(host, sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="kaoshi-view", daemon=True)
    thread.start()
    deadline = time.monotonic() + _START_WAIT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(timeout=_START_WAIT_S)
            sock.close()
            raise InputError(f"the viewer did not start on {url}")
        time.sleep(0.01)
    return RunningView(url, server, thread, sock)


def serve(
    store: str | Path | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allow_remote: bool = False,
    announce: Callable[[str], None] = say,
    prices: PriceList | None = None,
) -> None:
    """Serve the viewer of the store until interrupted (Ctrl-C); `announce` is told where (the URL, after a
    warning when serving beyond this machine)."""
    server, sock = _server(store, host, port, allow_remote, announce, prices)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn has shut down and raises the signal again: Ctrl-C is how the viewer stops
    finally:
        sock.close()
