"""The viewer's links. Run names and question ids are data (`law/0`, `a?b#c`, `50%`, `<script>`): each is
one percent-encoded path segment, `/` included, and the server splits the raw path before decoding it."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote, unquote, urlencode

RUN_PREFIX = "/run/"


def segment(text: str) -> str:
    """`text` as one path segment: every reserved character percent-encoded, `/` too."""
    return quote(text, safe="")


def run_url(name: str, *parts: str, query: Sequence[tuple[str, str]] = ()) -> str:
    """`/run/NAME[/PART...][?QUERY]`."""
    path = RUN_PREFIX + "/".join(segment(p) for p in (name, *parts))
    return f"{path}?{urlencode(list(query))}" if query else path


def compare_url(names: Sequence[str], page: int = 1) -> str:
    query = [("run", name) for name in names] + ([("page", str(page))] if page > 1 else [])
    return f"/compare?{urlencode(query)}"


def split_run_path(raw_path: str) -> list[str]:
    """The decoded segments after /run/ of a path as sent (still percent-encoded): `/run/a%2Fb/samples`
    is ['a/b', 'samples']."""
    if not raw_path.startswith(RUN_PREFIX):
        return []
    return [unquote(part, errors="strict") for part in raw_path[len(RUN_PREFIX) :].split("/")]
