"""Keeping credentials out of what kaoshi stores and prints: API keys in error bodies, passwords and key
parameters in endpoint URLs."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
# Credentials a server may echo whatever key we sent: an Authorization value, a key=... pair.
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=\-]{8,}")
_KEY_PAIR = re.compile(
    r"(?i)\b(api[-_]?key|access[-_]?token|secret|password|authorization|x-api-key)(\"?\s*[:=]\s*\"?)"
    r"[^\s\"'&,;}]{4,}"
)
# Query parameters whose values are credentials (Azure's api-key, signed URLs' sig, ...).
_SECRET_PARAMS = re.compile(r"(?i)(key|token|secret|password|sig|signature|auth)")
_MIN_SECRET = 4  # shorter "secrets" would mask ordinary words


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """`text` with each known secret, Authorization values and key=... pairs replaced by ***."""
    text = mask_secrets(text, secrets)
    text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    return _KEY_PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def mask_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with each known secret replaced by *** (and nothing else changed: fit for a model's answer)."""
    for secret in sorted((s for s in secrets if s and len(s) >= _MIN_SECRET), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def strip_credentials(url: str) -> str:
    """The URL without its user and password (`https://***@host/v1`) and with credential-like query
    values masked (`?api-key=***`), for the run spec and messages."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _SECRET_PARAMS.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str | None) -> list[str]:
    """The credential parts of a URL (password, user, credential-like query values), to redact."""
    if not url:
        return []
    parts = urlsplit(url)
    found = [p for p in (parts.password, parts.username) if p]
    found += [unquote(p) for p in found if unquote(p) != p]  # as sent in basic auth: decoded
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_PARAMS.search(k) and v]
    return found
