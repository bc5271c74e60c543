"""Where a request to an OpenAI-compatible endpoint goes and with what credentials, and how much of its
reply is read.

A base URL may carry credentials in the two forms proxies and gateways use: `http://user:pw@host/v1`
(HTTP basic auth) and `https://host/v1?api-key=KEY` (a query parameter). The user and password become
that endpoint's Authorization header in place of the API key (they name that server's credentials, while
the key may be one set for every server); query parameters stay query parameters after every endpoint
path (`/v1/chat/completions?api-key=KEY`).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from kaoshi.models.base import ModelError
from kaoshi.models.secrets import strip_credentials

# A reply's body is read up to this many bytes per character of text it may hold: JSON may escape one
# character as 12 bytes (a surrogate pair, \ud83d\ude00), and a reasoning model's reasoning comes beside
# its answer.
REPLY_BYTES_PER_CHAR = 32
_CHUNK = 65_536


@dataclass(frozen=True)
class EndpointTarget:
    """One base URL split into the address requests go to, its query string and its credentials."""

    base: str  # scheme://host[:port]/path, without user, password, query or fragment
    query: str
    authorization: str | None  # the Authorization header's value

    @classmethod
    def parse(cls, url: str, api_key: str | None) -> EndpointTarget:
        parts = urlsplit(url)
        try:
            valid = parts.scheme in ("http", "https") and bool(parts.hostname) and (parts.port or 1) > 0
        except ValueError:  # a port that is not a number, or out of range
            valid = False
        if not valid:
            raise ModelError(f"--base-url must be an http(s) URL with a host, got {strip_credentials(url)!r}")
        host = parts.netloc.rpartition("@")[2]
        base = urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
        if parts.username is not None or parts.password is not None:
            user, password = unquote(parts.username or ""), unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            return cls(base, parts.query, f"Basic {token}")
        return cls(base, parts.query, f"Bearer {api_key}" if api_key else None)

    def url(self, path: str) -> str:
        """The URL of an endpoint path (`/chat/completions`), the base URL's query string kept."""
        return f"{self.base}{path}?{self.query}" if self.query else f"{self.base}{path}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": self.authorization} if self.authorization else {}

    @property
    def basic_token(self) -> str | None:
        """The encoded user:password, a secret to redact like the password itself."""
        if self.authorization is None or not self.authorization.startswith("Basic "):
            return None
        return self.authorization.removeprefix("Basic ")


async def read_capped(response: Any, limit: int) -> bytes | None:
    """An aiohttp response's body, or None when it is longer than `limit` bytes: reading stops there and
    the connection is closed, so a reply of any size costs at most `limit` bytes of memory."""
    declared = response.content_length
    if declared is not None and declared > limit:
        response.close()
        return None
    body = bytearray()
    while chunk := await response.content.read(_CHUNK):
        body += chunk
        if len(body) > limit:
            response.close()
            return None
    return bytes(body)


def describe_client_error(exc: BaseException) -> str:
    """A connection failure in words: what the server did, not only aiohttp's class name (a body cut
    off mid-way and one that cannot be decompressed are both a bare ClientPayloadError)."""
    import aiohttp

    detail = " ".join(str(exc).split())[:160]
    if isinstance(exc, aiohttp.ClientPayloadError):
        if "encoding" in detail.lower() or "decompress" in detail.lower():
            what = "the reply's body could not be decompressed as its Content-Encoding says"
        else:
            what = "the connection closed before the reply's body was complete"
    elif isinstance(exc, aiohttp.ServerDisconnectedError):
        what = "the server closed the connection without replying"
    elif isinstance(exc, aiohttp.ClientConnectorError):
        what = "could not connect"
    else:
        what = "connection error"
    return f"{what} ({type(exc).__name__}: {detail})" if detail else f"{what} ({type(exc).__name__})"
