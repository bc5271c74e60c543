"""The viewer as a Starlette app: server-rendered pages (Jinja, autoescaped), one JSON endpoint the runs page
polls, and its own script and style under /static (no CDN: it works offline). Under /api every answer is
JSON, an error too (`{"error": "..."}`); a page's error is a page.

Everything in the store is data, never markup: templates escape every value, links percent-encode run
names and ids, the script writes with textContent only, and every response carries a
Content-Security-Policy that allows only the viewer's own script, style and images (no inline script,
no handler attribute), so even a slip could not run what a model wrote.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kaoshi.analysis.cost import PriceList
from kaoshi.errors import InputError
from kaoshi.report.render import percent
from kaoshi.store import StoreError
from kaoshi.version import __version__
from kaoshi.view.compare import compare_page
from kaoshi.view.filters import page_number
from kaoshi.view.pages import (
    NotFound,
    Viewer,
    leaderboard_page,
    ledger_page,
    run_page,
    run_plot,
    runs_page,
)
from kaoshi.view.samples import sample_page, samples_page
from kaoshi.view.urls import compare_url, run_url, split_run_path

_log = logging.getLogger("kaoshi")
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        b"form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
)
API = "/api"
# A Host header as RFC 9110 has it: a name or a bracketed IPv6 address, then an optional port; anything more
# (`127.0.0.1:8000@evil.com`, `[::1]evil`) is refused, not cut down to a name that passes.
_HOST_HEADER = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?", re.ASCII)
_LAST_PORT = 65535


def is_api(path: str) -> bool:
    return path == API or path.startswith(API + "/")


def error_response(path: str, status: int, message: str) -> Response:
    """An error as its route answers: JSON under /api, else plain text (Starlette's own form)."""
    if is_api(path):
        return JSONResponse({"error": message}, status_code=status)
    return PlainTextResponse(message, status_code=status)


class Guard:
    """Adds the security headers to every response, and (bound to this machine only) answers only requests
    addressed to it: another site's page cannot reach the viewer through a DNS name that points here."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else frozenset(h.lower() for h in allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.allowed is not None and _host_name(scope) not in self.allowed:
            response = error_response(scope.get("path", ""), 421, "unexpected Host header")
            await response(scope, receive, self._with_headers(send))
            return
        await self.app(scope, receive, self._with_headers(send))

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        return sending


def _host_name(scope: Scope) -> str | None:
    """The name the Host header gives, without its port (`[::1]:8000` -> `[::1]`); None unless the request
    has one Host header of that form."""
    hosts = [v for k, v in scope.get("headers", []) if k == b"host"]
    if len(hosts) != 1:
        return None
    found = _HOST_HEADER.fullmatch(hosts[0].decode("latin-1").lower())
    if found is None or (found["port"] is not None and not 0 < int(found["port"]) <= _LAST_PORT):
        return None
    return found["name"]


def templates() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("kaoshi.view", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals.update(run_url=run_url, compare_url=compare_url, percent=percent, version=__version__)
    return environment


class Pages:
    """The routes' handlers: each renders a template with what kaoshi.view.pages gives it."""

    def __init__(self, viewer: Viewer) -> None:
        self.viewer = viewer
        self.environment = templates()

    def render(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        page = self.environment.get_template(template)
        return HTMLResponse(page.render(store=str(self.viewer.path), **context), status_code=status)

    def error_page(self, request: Request, status: int, title: str, message: str) -> Response:
        if is_api(request.url.path):
            return error_response(request.url.path, status, message)
        return self.render("error.html", status, page_kind="error", title=title, message=message)

    def guarded(self, handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        """The handler, its errors answered as pages (as JSON under /api): 404 for what the store lacks,
        400 for a bad query, 503 for a store that cannot be read (another process's file, a damaged one)."""

        def handle(request: Request) -> Response:
            try:
                return handler(request)
            except NotFound as exc:
                return self.error_page(request, 404, "not found", str(exc))
            except InputError as exc:
                return self.error_page(request, 400, "bad request", str(exc))
            except StoreError as exc:
                _log.warning("kaoshi view: %s", exc)
                return self.error_page(request, 503, "the store cannot be read", str(exc))

        return handle

    def runs(self, request: Request) -> Response:
        return self.render("runs.html", page_kind="runs", **runs_page(self.viewer))

    def runs_json(self, request: Request) -> Response:
        return JSONResponse(runs_page(self.viewer))

    def leaderboard(self, request: Request) -> Response:
        return self.render("leaderboard.html", page_kind="leaderboard", **leaderboard_page(self.viewer))

    def compare(self, request: Request) -> Response:
        names = request.query_params.getlist("run")
        page = page_number(request.query_params.get("page"))
        return self.render("compare.html", page_kind="compare", **compare_page(self.viewer, names, page))

    def run(self, request: Request) -> Response:
        """/run/NAME, /run/NAME/samples, /run/NAME/sample/ID, /run/NAME/ledger, /run/NAME/plot.png and its
        caption
        /run/NAME/plot.json, split on the raw path: a run name or question id may hold `/` (sent as %2F)."""
        raw = request.scope.get("raw_path") or request.url.path.encode()
        try:
            parts = split_run_path(raw.decode("ascii"))
        except UnicodeDecodeError:
            raise InputError("the path is not valid percent-encoded UTF-8") from None
        params = dict(request.query_params)
        match parts:
            case [name]:
                return self.render("run.html", page_kind="run", run=name, **run_page(self.viewer, name))
            case [name, "samples"]:
                return self.render(
                    "samples.html", page_kind="samples", **samples_page(self.viewer, name, params)
                )
            case [name, "sample", question_id]:
                return self.render(
                    "sample.html", page_kind="sample", **sample_page(self.viewer, name, question_id)
                )
            case [name, "ledger"]:
                ledger = ledger_page(self.viewer, name)
                return self.render("ledger.html", page_kind="ledger", run=name, **ledger)
            case [name, "plot.png"]:
                return Response(run_plot(self.viewer, name).png, media_type="image/png")
            case [name, "plot.json"]:
                return JSONResponse({"caption": run_plot(self.viewer, name).caption})
        raise NotFound(f"no page at {request.url.path}")


def create_viewer_app(
    path: Path, allowed_hosts: Iterable[str] | None = None, prices: PriceList | None = None
) -> ASGIApp:
    """The viewer of the store at `path` (which must exist: kaoshi.view.server checks it first).
    `allowed_hosts`: the Host names it answers (None: any); `prices`: what each run's tokens cost."""
    pages = Pages(Viewer(path, prices=prices))
    routes = [
        Route("/", pages.guarded(pages.runs)),
        Route("/api/runs", pages.guarded(pages.runs_json)),
        Route("/leaderboard", pages.guarded(pages.leaderboard)),
        Route("/compare", pages.guarded(pages.compare)),
        Route("/run/{rest:path}", pages.guarded(pages.run)),
        Mount("/static", app=StaticFiles(packages=[("kaoshi.view", "static")]), name="static"),
    ]
    handlers = {HTTPException: _http_error, Exception: _server_error}
    return Guard(Starlette(routes=routes, exception_handlers=handlers), allowed_hosts)


def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own answers (no such route, a method other than GET), as JSON under /api."""
    assert isinstance(exc, HTTPException)
    response = error_response(request.url.path, exc.status_code, exc.detail)
    response.headers.update(exc.headers or {})
    return response


def _server_error(request: Request, exc: Exception) -> Response:
    """A bug's answer (Starlette logs it and raises it again to the server), as JSON under /api."""
    return error_response(request.url.path, 500, "Internal Server Error")
